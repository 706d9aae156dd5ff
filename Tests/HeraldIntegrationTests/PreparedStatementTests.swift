import HeraldRuntime
import Logging
import PostgresNIO
import Testing

/// A statement (``HeraldStatement``) is prepared once per connection.
@Suite(.needsServers) struct PreparedStatementTests {
    /// Reads a table this test creates (no statement file may: the check prepares them all on
    /// a migrated database).
    struct Probe: HeraldStatement {
        static let sql = "SELECT n + $1::int FROM public.herald_prepared_probe"
        static let bindingDataTypes: [PostgresDataType] = [.int4]
        var n: Int32

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 1)
            bindings.append(n)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Int32 { try row.decode(Int32.self) }
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

            let error = await #expect(throws: PSQLError.self) { try await Probe(n: 1).rows(on: client, logger: harness.logger) }
            #expect(error?.serverInfo?[.sqlState] == "42P01", "the table does not exist yet")

            try await harness.database.query("CREATE TABLE public.herald_prepared_probe (n int)", logger: harness.logger)
            try await harness.database.query("INSERT INTO public.herald_prepared_probe VALUES (41)", logger: harness.logger)
            #expect(try await Probe(n: 1).rows(on: client, logger: harness.logger) == [42])
            // Prepared now: the same connection runs it again with other binds.
            #expect(try await Probe(n: 2).rows(on: client, logger: harness.logger) == [43])
        }
    }
}
