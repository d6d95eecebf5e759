import SSOCore

/// Deletes what can no longer be used, so the database does not grow
/// without bound. Each statement removes at most `batch` rows in its own
/// short transaction: a sweep never holds the write lock long enough to make
/// a sign-in wait.
public final class Sweeper {
    let config: GatehouseConfig
    let database: SQLiteDatabase
    let clock: Clock

    public init(config: GatehouseConfig, database: SQLiteDatabase, clock: @escaping Clock = systemClock) {
        self.config = config
        self.database = database
        self.clock = clock
    }

    /// What one sweep removes, table by table; each condition says why the
    /// rows are worthless.
    func rules(now: Int64) -> [(table: String, condition: String, values: [SQLiteValue])] {
        let refreshLifetime = Int64(config.refreshTokenLifetime)
        let grace = Int64(config.refreshGracePeriod)
        return [
            ("pending_authorizations", "expires_at <= ?", [.integer(now)]),
            // Unused codes die at expiry; used ones are kept while the tokens
            // they issued may live, so a replay can still revoke them.
            ("authorization_codes", "(used_at IS NULL AND expires_at <= ?) OR expires_at <= ?",
             [.integer(now), .integer(now - refreshLifetime)]),
            ("refresh_tokens", "expires_at <= ?", [.integer(now - grace)]),
            ("revoked_access_tokens", "expires_at <= ?", [.integer(now - 60)]),
            // A revoked or expired device secret can never be accepted again
            // (Native SSO checks require a live one); nothing refers to it.
            ("device_secrets", "revoked_at IS NOT NULL OR expires_at <= ?", [.integer(now)]),
            // Ended or expired sessions stay a day for `ssoctl sessions list`,
            // and as long as any refresh token still names them.
            ("sso_sessions", """
                coalesce(ended_at, expires_at) <= ? AND (ended_at IS NOT NULL OR expires_at <= ?)
                AND NOT EXISTS (SELECT 1 FROM refresh_tokens r WHERE r.sid = sso_sessions.sid)
                """, [.integer(now - 86_400), .integer(now)]),
        ]
    }

    @discardableResult
    public func sweep(batch: Int = 500) throws -> [String: Int] {
        let now = clock()
        var removed: [String: Int] = [:]
        for rule in rules(now: now) {
            var total = 0
            while true {
                let count = try database.execute("""
                    DELETE FROM \(rule.table) WHERE rowid IN (SELECT rowid FROM \(rule.table) WHERE \(rule.condition) LIMIT ?)
                    """, rule.values + [.integer(Int64(batch))])
                total += count
                if count < batch { break }
            }
            removed[rule.table] = total
        }
        // The grace window is over: drop the sealed copies of successors.
        removed["sealed successors"] = try database.execute("""
            UPDATE refresh_tokens SET successor_sealed = NULL WHERE successor_sealed IS NOT NULL AND used_at <= ?
            """, [.integer(now - Int64(config.refreshGracePeriod))])
        return removed
    }
}
