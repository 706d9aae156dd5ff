import HeraldRuntime

extension PushSchema {
    /// Migration 26 (issue 18): the functions on a push job's path keep one generic plan per
    /// statement instead of planning again on every call (``GenericPlans``).
    static let genericPlans = Migration(version: 26, name: "push_generic_plans", sql: GenericPlans.sql(functions: [
        "push_prepare", "push_exhausted", "push_receipt_consume",
    ]))
}
