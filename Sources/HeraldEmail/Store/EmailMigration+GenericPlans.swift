import HeraldRuntime

extension EmailSchema {
    /// Migration 24 (issue 18): the functions on an email job's path keep one generic plan per
    /// statement instead of planning again on every call (``GenericPlans``).
    static let genericPlans = Migration(version: 24, name: "email_generic_plans", sql: GenericPlans.sql(functions: [
        "email_prepare", "email_rate_take", "email_use_code",
    ]))
}
