import IssuerStorage
import SQLiteClient

/// `login_throttle`: one row per key (a SHA-256), counted in one
/// `INSERT … ON CONFLICT DO UPDATE … RETURNING`, which SQLite's write lock
/// serializes across every login process.
final class SQLiteLoginThrottleStore: LoginThrottleStore {
    let database: SQLiteDatabase
    init(database: SQLiteDatabase) { self.database = database }

    func lockedUntil(key: [UInt8], now: Int64) throws -> Int64? {
        try database.queryOne("SELECT locked_until FROM login_throttle WHERE key_hash = ? AND locked_until > ?",
                              [.blob(key), .integer(now)])?.int(0)
    }

    /// (In the DO UPDATE clause every column name is the row's old value.)
    func reserve(key: [UInt8], policy: ThrottlePolicy, now: Int64) throws -> Int64? {
        let row = try database.queryOne("""
            INSERT INTO login_throttle (key_hash, failures, window_started_at, locked_until, admitted) VALUES (?1, 1, ?2, 0, 1)
            ON CONFLICT (key_hash) DO UPDATE SET
                admitted = locked_until <= ?2,
                failures = CASE WHEN locked_until > ?2 THEN failures
                                WHEN window_started_at <= ?2 - ?4 AND locked_until <= ?2 - ?4 THEN 1
                                ELSE failures + 1 END,
                window_started_at = CASE WHEN window_started_at <= ?2 - ?4 AND locked_until <= ?2 - ?4 THEN ?2
                                         ELSE window_started_at END,
                locked_until = CASE WHEN locked_until > ?2 THEN locked_until
                                    WHEN window_started_at <= ?2 - ?4 AND locked_until <= ?2 - ?4 THEN 0
                                    WHEN failures + 1 >= ?3 THEN ?2 + MIN(?5 << MIN(failures + 1 - ?3, 20), ?6)
                                    ELSE locked_until END
            RETURNING admitted, locked_until
            """, [.blob(key), .integer(now), .integer(Int64(policy.maximumFailures)), .integer(Int64(policy.window)),
                  .integer(Int64(policy.firstLockDuration)), .integer(Int64(policy.longestLockDuration))])
        guard let row, row.int(0) != 1 else { return nil }
        return row.int(1)
    }

    func refund(key: [UInt8], policy: ThrottlePolicy, now: Int64) throws {
        try database.execute("""
            UPDATE login_throttle SET failures = failures - 1,
                locked_until = CASE WHEN failures - 1 < ?2 THEN 0 WHEN locked_until > ?3 THEN ?3 ELSE locked_until END
            WHERE key_hash = ?1 AND failures > 0
            """, [.blob(key), .integer(Int64(policy.maximumFailures)), .integer(now)])
    }

    func reset(key: [UInt8]) throws {
        try database.execute("DELETE FROM login_throttle WHERE key_hash = ?", [.blob(key)])
    }

    /// Indexed on window_started_at.
    func sweep(horizon: Int64) throws {
        try database.execute("DELETE FROM login_throttle WHERE window_started_at <= ? AND locked_until <= ?",
                             [.integer(horizon), .integer(horizon)])
    }
}
