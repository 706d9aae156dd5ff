import HeraldRuntime
import Logging
import PostgresNIO
import Testing

/// The statements on a job's path are prepared once per connection (``Prepared``).
@Suite(.needsServers) struct PreparedStatementTests {
    enum ProbeSQL: StatementText {
        static let sql = "SELECT n + $1::int FROM public.herald_prepared_probe"
    }

    /// postgres-nio keeps a failed preparation for the connection's life; the connection is closed
    /// instead, so the statement runs once what it reads exists (a worker started before its
    /// migration, a parse that was cancelled).
    @Test func aStatementThatFailedToPrepareRunsOnceItsTableExists() async throws {
        try await withHarness { harness in
            try await harness.database.query("DROP TABLE IF EXISTS public.herald_prepared_probe", logger: harness.logger)
            var settings = harness.configuration.database
            settings.maxConnections = 1
            let client = try Database.makeClient(settings, logger: harness.logger)
            let task = Task { await client.run() }
            defer { task.cancel() }
            harness.onClose { _ = try? await harness.database.query("DROP TABLE IF EXISTS public.herald_prepared_probe", logger: harness.logger) }

            let error = await #expect(throws: PSQLError.self) { try await Prepared<ProbeSQL>(1).rows(on: client, logger: harness.logger) }
            #expect(error?.serverInfo?[.sqlState] == "42P01", "the table does not exist yet")

            try await harness.database.query("CREATE TABLE public.herald_prepared_probe (n int)", logger: harness.logger)
            try await harness.database.query("INSERT INTO public.herald_prepared_probe VALUES (41)", logger: harness.logger)
            let rows = try await Prepared<ProbeSQL>(1).rows(on: client, logger: harness.logger)
            #expect(try rows.map { try $0.decode(Int32.self) } == [42])
            // Prepared now: the same connection runs it again with other binds.
            #expect(try await Prepared<ProbeSQL>(2).rows(on: client, logger: harness.logger).map { try $0.decode(Int32.self) } == [43])
        }
    }
}
