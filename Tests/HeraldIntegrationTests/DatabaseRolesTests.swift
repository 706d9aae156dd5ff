import Foundation
import PostgresNIO
import Testing
@testable import HeraldRuntime

/// The roles migration's (runtime 0004) on the real database: `herald_migrate` owns the schema and its tables;
/// `herald_worker` reads and writes rows, runs the functions, and can change no structure, also
/// on tables created later (default privileges). Everything runs in a transaction rolled back,
/// and the DDL probes touch only a table of its own: other tests run on the same schema.
@Suite(.needsServers) struct DatabaseRolesTests {
    @Test func theWorkerRoleWritesRowsButChangesNoStructure() async throws {
        try await withHarness() { harness in
            try await harness.database.withConnection { c in
                let logger = harness.logger
                let owners = try await c.query("""
                    SELECT c.relname, pg_get_userbyid(c.relowner),
                           pg_has_role(c.relowner, 'herald_migrate', 'MEMBER'),
                           has_table_privilege('herald_worker', c.oid, 'SELECT') AND has_table_privilege('herald_worker', c.oid, 'INSERT')
                             AND has_table_privilege('herald_worker', c.oid, 'UPDATE') AND has_table_privilege('herald_worker', c.oid, 'DELETE'),
                           has_table_privilege('herald_worker', c.oid, 'TRUNCATE') OR has_table_privilege('herald_worker', c.oid, 'TRIGGER')
                             OR has_table_privilege('herald_worker', c.oid, 'REFERENCES')
                    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                    WHERE n.nspname = 'herald' AND c.relkind IN ('r', 'p')
                    """, logger: logger).decode((String, String, Bool, Bool, Bool).self).all()
                #expect(owners.count > 10, "the channels' tables are there")
                for (table, owner, migrationOwns, dml, more) in owners {
                    #expect(migrationOwns, "\(table) is owned by \(owner), not herald_migrate or a member")
                    #expect(dml, "herald_worker cannot read and write \(table)")
                    #expect(!more, "herald_worker has TRUNCATE, TRIGGER or REFERENCES on \(table)")
                }
                let schema = try await c.query("""
                    SELECT pg_get_userbyid(nspowner), has_schema_privilege('herald_worker', 'herald', 'CREATE'),
                           has_schema_privilege('herald_worker', 'herald', 'USAGE')
                    FROM pg_namespace WHERE nspname = 'herald'
                    """, logger: logger).decode((String, Bool, Bool).self).all()
                #expect(schema.first?.0 == "herald_migrate")
                #expect(schema.first?.1 == false, "herald_worker may not create in the schema")
                #expect(schema.first?.2 == true)

                try await c.query("BEGIN", logger: logger)
                do {
                    try await c.query("SET LOCAL lock_timeout = '5s'", logger: logger)
                    // The roles migration's (runtime 0004) again (another database of the cluster made them first): no
                    // error. (Its ownership changes are not re-run here: they lock every table.)
                    let roles = try #require(RuntimeSchema.group.migrations.first { $0.name == "database_roles" }?.file.statements.first)
                    #expect(roles.contains("CREATE ROLE herald_migrate"))
                    try await c.query(PostgresQuery(unsafeSQL: roles), logger: logger)
                    // A table a later migration creates, as the migration role.
                    try await c.query("SET LOCAL ROLE herald_migrate", logger: logger)
                    try await c.query("CREATE TABLE herald.roles_probe_later (id bigserial PRIMARY KEY, v int)", logger: logger)
                    try await c.query("SET LOCAL ROLE herald_worker", logger: logger)
                    func refusal(_ sql: String) async throws -> String? {
                        try await c.query("SAVEPOINT probe", logger: logger)
                        do {
                            try await c.query(PostgresQuery(unsafeSQL: sql), logger: logger)
                            try await c.query("RELEASE SAVEPOINT probe", logger: logger)
                            return nil
                        } catch let error as PSQLError {
                            try await c.query("ROLLBACK TO SAVEPOINT probe", logger: logger)
                            return error.serverInfo?[.sqlState]
                        }
                    }
                    // 42501 insufficient_privilege; ALTER and DROP need ownership (also 42501).
                    #expect(try await refusal("CREATE TABLE herald.roles_probe (x int)") == "42501")
                    #expect(try await refusal("ALTER TABLE herald.roles_probe_later ADD COLUMN w int") == "42501")
                    #expect(try await refusal("DROP TABLE herald.roles_probe_later") == "42501")
                    #expect(try await refusal("TRUNCATE herald.roles_probe_later") == "42501")
                    #expect(try await refusal("CREATE INDEX roles_probe_idx ON herald.roles_probe_later (v)") == "42501")
                    #expect(try await refusal("CREATE FUNCTION herald.roles_probe() RETURNS int LANGUAGE sql AS 'SELECT 1'") == "42501")
                    // Rows, sequences and the migration ledger: allowed.
                    #expect(try await refusal("""
                        INSERT INTO herald.event_outbox (exchange, name, message_id, body) VALUES ('x', 'roles.probe', 'roles-probe', '{}')
                        """) == nil)
                    #expect(try await refusal("DELETE FROM herald.event_outbox WHERE message_id = 'roles-probe'") == nil)
                    #expect(try await refusal("SELECT max(applied_at) FROM public.herald_schema_ledger") == nil)
                    // The later table is the worker's to read and write (default privileges).
                    #expect(try await refusal("INSERT INTO herald.roles_probe_later (v) VALUES (1)") == nil)
                    #expect(try await refusal("UPDATE herald.roles_probe_later SET v = 2") == nil)
                } catch {
                    let server = (error as? PSQLError)?.serverInfo
                    Issue.record("\(server?[.sqlState] ?? "-"): \(server?[.message] ?? "\(error)")")
                    try await c.query("ROLLBACK", logger: logger)
                    throw error
                }
                try await c.query("ROLLBACK", logger: logger)
            }
        }
    }
}

extension AsyncSequence {
    /// Every element, in order.
    fileprivate func all() async throws -> [Element] {
        var out: [Element] = []
        for try await element in self { out.append(element) }
        return out
    }
}
