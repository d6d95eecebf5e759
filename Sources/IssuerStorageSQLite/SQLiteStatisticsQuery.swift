import Glibc
import IssuerStorage
import SQLiteClient

/// Counts for `ssoctl stats`, one read-only statement each, all inside one
/// read transaction so they describe a single moment.
///
/// Cost with 1 M refresh tokens (EXPLAIN QUERY PLAN, measured on this
/// schema): the live refresh token count is one pass over the table, about
/// 0.1 s warm. The `refresh_tokens_expiry` index does not help it: once the
/// sweeper has run, nearly every row is unexpired, and walking the index
/// costs a table lookup per row (about 4 times slower), hence the unary `+`
/// that keeps the planner off it. Only a partial index on the live rows
/// would make it index-only. Every other count is a small table, an index
/// range over a short-lived table (codes, device secrets), or count(*) over
/// the smallest index.
struct SQLiteStatisticsQuery {
    let database: SQLiteDatabase

    func gather(now: Int64) throws -> IssuerStatistics {
        // A deferred transaction: no lock until the first read, then one
        // snapshot for every count; a read-only connection never writes.
        try database.execute("BEGIN")
        defer { _ = try? database.execute("COMMIT") }
        return IssuerStatistics(
            users: try users(), passkeys: try count(Self.passkeysSQL), clients: try clients(), liveSSOSessions: try liveSSOSessions(now: now),
            refreshTokens: try refreshTokens(now: now), outstandingAuthorizationCodes: try outstandingAuthorizationCodes(now: now),
            revokedAccessTokens: try revokedAccessTokens(now: now), signingKeys: [:],
            liveDeviceSecrets: try liveDeviceSecrets(now: now), loginThrottle: try loginThrottle(now: now),
            databaseBytes: SQLiteFileSize.of(database.path), walBytes: SQLiteFileSize.of(database.path + "-wal"))
    }

    func users() throws -> IssuerStatistics.Users {
        let row = try database.queryOne(Self.usersSQL)
        return .init(total: row?.int(0) ?? 0, disabled: row?.int(1) ?? 0)
    }

    func clients() throws -> IssuerStatistics.Clients {
        let row = try database.queryOne(Self.clientsSQL)
        return .init(total: row?.int(0) ?? 0, confidential: row?.int(1) ?? 0)
    }

    /// SSOSessionStore.find's rule. The user test is a correlated lookup by
    /// primary key, so the plan is one pass over sessions whatever the
    /// planner's statistics say (a join may start from users instead).
    func liveSSOSessions(now: Int64) throws -> Int64 {
        try count(Self.liveSSOSessionsSQL, [.integer(now)])
    }

    func refreshTokens(now: Int64) throws -> IssuerStatistics.RefreshTokens {
        .init(live: try count(Self.liveRefreshTokensSQL, [.integer(now)]), stored: try count(Self.storedRefreshTokensSQL))
    }

    /// Few rows (60 s lifetime): a range on authorization_codes_expiry.
    func outstandingAuthorizationCodes(now: Int64) throws -> Int64 {
        try count(Self.outstandingCodesSQL, [.integer(now)])
    }

    func revokedAccessTokens(now: Int64) throws -> Int64 {
        try count(Self.revokedAccessTokensSQL, [.integer(now)])
    }

    /// A range on device_secrets_expiry: the sweeper deletes revoked and
    /// expired secrets, so what it reaches is mostly live.
    func liveDeviceSecrets(now: Int64) throws -> Int64 {
        try count(Self.liveDeviceSecretsSQL, [.integer(now)])
    }

    func loginThrottle(now: Int64) throws -> IssuerStatistics.LoginThrottleCounters {
        let row = try database.queryOne(Self.loginThrottleSQL, [.integer(now), .integer(now - 3600)])
        return .init(counters: row?.int(0) ?? 0, failures: row?.int(1) ?? 0, locked: row?.int(2) ?? 0)
    }

    // MARK: The statements (EXPLAIN QUERY PLAN in IssuerStatisticsTests)

    static let usersSQL = "SELECT count(*), coalesce(sum(disabled != 0), 0) FROM users"
    static let clientsSQL = "SELECT count(*), count(secret_hash) FROM clients"
    /// count(*) over the smallest index (passkeys_user): a few rows per user at most.
    static let passkeysSQL = "SELECT count(*) FROM passkeys"
    static let liveSSOSessionsSQL = """
        SELECT count(*) FROM sso_sessions s WHERE s.ended_at IS NULL AND s.expires_at > ?
        AND NOT EXISTS (SELECT 1 FROM users u WHERE u.id = s.user_id AND u.disabled != 0)
        """
    /// `+expires_at`: a full pass, not the expiry index (see the type's comment).
    static let liveRefreshTokensSQL = "SELECT count(*) FROM refresh_tokens WHERE used_at IS NULL AND revoked_at IS NULL AND +expires_at > ?"
    static let storedRefreshTokensSQL = "SELECT count(*) FROM refresh_tokens"
    static let outstandingCodesSQL = "SELECT count(*) FROM authorization_codes WHERE expires_at > ? AND used_at IS NULL"
    static let revokedAccessTokensSQL = "SELECT count(*) FROM revoked_access_tokens WHERE expires_at > ?"
    static let liveDeviceSecretsSQL = "SELECT count(*) FROM device_secrets WHERE expires_at > ? AND revoked_at IS NULL"
    /// ?1 now, ?2 an hour ago. A small table: the throttle deletes stale rows.
    static let loginThrottleSQL = """
        SELECT coalesce(sum(failures > 0 AND window_started_at > ?2), 0),
               coalesce(sum(CASE WHEN failures > 0 AND window_started_at > ?2 THEN failures ELSE 0 END), 0),
               coalesce(sum(locked_until > ?1), 0)
        FROM login_throttle
        """

    private func count(_ sql: String, _ values: [SQLiteValue] = []) throws -> Int64 {
        try database.queryOne(sql, values)?.int(0) ?? 0
    }
}

/// A file's size in bytes, 0 when it is missing.
enum SQLiteFileSize {
    static func of(_ path: String) -> Int64 {
        var status = stat()
        return stat(path, &status) == 0 ? Int64(status.st_size) : 0
    }
}
