import HeraldRuntime

/// Cleanup's own migrations (the tables themselves are the runtime's: migrations 3 and 11).
enum CleanupMigration {
    static let all: [Migration] = [pacing]

    /// 25: what a run paused to leave the database to live traffic (`cleanup.pace.*`), summed
    /// over its workers' batches, next to `batches`.
    static let pacing = Migration(version: 25, name: "cleanup_run_pauses", sql: """
        ALTER TABLE herald.cleanup_runs ADD COLUMN paused_ms bigint NOT NULL DEFAULT 0;
        """)
}
