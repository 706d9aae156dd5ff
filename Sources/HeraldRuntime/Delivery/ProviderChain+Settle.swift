extension ProviderChain.Delivery {
    /// How every channel ends a delivery: the channel says what each outcome means
    /// (``DeliveryEnd``: accepted, refused for good with `provider:code`, every provider
    /// failed with the chain's reason); its record is written at once, on its own and held
    /// while the database is away (``JobContext/untilDatabase(_:)``: a redelivery then finds
    /// it and sends nothing again), then the job's outcome is returned or its retry thrown.
    public func settle(in context: JobContext,
                       accepted: () -> DeliveryEnd,
                       refused: (_ reason: String) -> DeliveryEnd,
                       failed: (_ reason: String) -> DeliveryEnd) async throws -> JobOutcome {
        let end: DeliveryEnd
        switch outcome {
        case .accepted: end = accepted()
        case .refused(let reason): end = refused(reason)
        case .failed(let reason): end = failed(reason)
        }
        try await context.untilDatabase(end.record)
        switch end.answer {
        case .outcome(let outcome): return outcome
        case .retry(let reason): throw JobFailure.transient(reason)
        }
    }
}
