import IssuerStorage
import PostgreSQLClient

/// Sweeping, counting and checking the PostgreSQL database.
struct PostgreSQLMaintenance: StorageMaintenance {
    let connection: PostgreSQLConnection

    /// The URL without its password.
    var location: String { PostgreSQLURL.redacted(connection.url) }

    // MARK: Sweep (the same rules as the SQLite backend's)

    func rules(_ policy: SweepPolicy) -> [(table: String, condition: String, values: [PostgreSQLValue])] {
        let now = policy.now
        return [
            ("pending_authorizations", "expires_at <= $1", [.integer(now)]),
            ("federation_requests", "expires_at <= $1", [.integer(now)]),
            ("authorization_codes", "(used_at IS NULL AND expires_at <= $1) OR expires_at <= $2",
             [.integer(now), .integer(now - policy.refreshTokenLifetime)]),
            ("refresh_tokens", "expires_at <= $1", [.integer(now - policy.refreshGracePeriod)]),
            ("revoked_access_tokens", "expires_at <= $1", [.integer(now - policy.accessTokenLeeway)]),
            ("pushed_authorizations", "expires_at <= $1 OR used_at IS NOT NULL", [.integer(now)]),
            ("dpop_proofs", "expires_at <= $1", [.integer(now)]),
            // An initial access token is good until it expires or its uses are spent.
            ("initial_access_tokens", "expires_at <= $1 OR uses_left <= 0", [.integer(now)]),
            ("webauthn_challenges", "expires_at <= $1 OR used_at IS NOT NULL", [.integer(now)]),
            ("device_secrets", "revoked_at IS NOT NULL OR expires_at <= $1", [.integer(now)]),
            ("sso_sessions", """
                coalesce(ended_at, expires_at) <= $1 AND (ended_at IS NOT NULL OR expires_at <= $2)
                AND NOT EXISTS (SELECT 1 FROM refresh_tokens r WHERE r.sid = sso_sessions.sid)
                """, [.integer(now - policy.endedSessionRetention), .integer(now)]),
            ("mail_outbox", "sent_at <= $1 OR failed_at <= $2",
             [.integer(now - policy.sentMailRetention), .integer(now - policy.failedMailRetention)]),
            ("account_links", "expires_at <= $1", [.integer(now)]),
            ("users", """
                email_verified = 0 AND password_hash <> '' AND created_at <= $1
                AND NOT EXISTS (SELECT 1 FROM sso_sessions s WHERE s.user_id = users.id)
                AND NOT EXISTS (SELECT 1 FROM account_links l WHERE l.user_id = users.id AND l.used_at IS NULL AND l.expires_at > $2)
                """, [.integer(now - policy.unverifiedSignUpRetention), .integer(now)]),
        ]
    }

    func sweep(_ policy: SweepPolicy, batch: Int) throws -> [String: Int] {
        var removed: [String: Int] = [:]
        for rule in rules(policy) {
            var total = 0
            let limit = "$\(rule.values.count + 1)"
            while true {
                let pacing = SweepPacing()
                let count = try connection.transaction {
                    try connection.execute("""
                        DELETE FROM \(rule.table) WHERE ctid IN (SELECT ctid FROM \(rule.table) WHERE \(rule.condition) LIMIT \(limit))
                        """, rule.values + [.integer(Int64(batch))])
                }
                total += count
                // Only an empty batch ends the rule: another sweep (the
                // supervisor's, another node's) deleting the same rows makes
                // a batch come back short while more remain.
                if count == 0 { break }
                pacing.rest(afterRemoving: count, of: batch)
            }
            removed[rule.table] = total
        }
        removed["sealed successors"] = try connection.execute("""
            UPDATE refresh_tokens SET successor_sealed = NULL WHERE successor_sealed IS NOT NULL AND used_at <= $1
            """, [.integer(policy.now - policy.refreshGracePeriod)])
        return removed
    }

    // MARK: Readiness

    func recordReadinessProbe(node: String, now: Int64) throws {
        try connection.transaction {
            _ = try connection.execute("""
                INSERT INTO readiness_probes (node, written_at) VALUES ($1, $2)
                ON CONFLICT (node) DO UPDATE SET written_at = excluded.written_at
                """, [.text(node), .integer(now)])
        }
    }

    // MARK: Statistics

    /// One REPEATABLE READ transaction: every count from one snapshot.
    func statistics(now: Int64) throws -> IssuerStatistics {
        try connection.executeScript("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        defer { _ = try? connection.executeScript("COMMIT") }
        func count(_ sql: String, _ values: [PostgreSQLValue] = []) throws -> Int64 { try connection.queryOne(sql, values)?.int(0) ?? 0 }
        let users = try connection.queryOne("SELECT count(*), coalesce(sum(disabled), 0)::bigint FROM users")
        let clients = try connection.queryOne("SELECT count(*), count(secret_hash) FROM clients")
        let throttle = try connection.queryOne("""
            SELECT coalesce(sum(CASE WHEN failures > 0 AND window_started_at > $2 THEN 1 ELSE 0 END), 0)::bigint,
                   coalesce(sum(CASE WHEN failures > 0 AND window_started_at > $2 THEN failures ELSE 0 END), 0)::bigint,
                   coalesce(sum(CASE WHEN locked_until > $1 THEN 1 ELSE 0 END), 0)::bigint
            FROM login_throttle
            """, [.integer(now), .integer(now - 3600)])
        return IssuerStatistics(
            users: .init(total: users?.int(0) ?? 0, disabled: users?.int(1) ?? 0),
            passkeys: try count("SELECT count(*) FROM passkeys"),
            clients: .init(total: clients?.int(0) ?? 0, confidential: clients?.int(1) ?? 0),
            liveSSOSessions: try count("""
                SELECT count(*) FROM sso_sessions s WHERE s.ended_at IS NULL AND s.expires_at > $1
                AND NOT EXISTS (SELECT 1 FROM users u WHERE u.id = s.user_id AND u.disabled != 0)
                """, [.integer(now)]),
            refreshTokens: .init(live: try count("SELECT count(*) FROM refresh_tokens WHERE used_at IS NULL AND revoked_at IS NULL AND expires_at > $1",
                                                 [.integer(now)]),
                                 stored: try count("SELECT count(*) FROM refresh_tokens")),
            outstandingAuthorizationCodes: try count("SELECT count(*) FROM authorization_codes WHERE expires_at > $1 AND used_at IS NULL",
                                                     [.integer(now)]),
            revokedAccessTokens: try count("SELECT count(*) FROM revoked_access_tokens WHERE expires_at > $1", [.integer(now)]),
            signingKeys: [:],
            liveDeviceSecrets: try count("SELECT count(*) FROM device_secrets WHERE expires_at > $1 AND revoked_at IS NULL", [.integer(now)]),
            loginThrottle: .init(counters: throttle?.int(0) ?? 0, failures: throttle?.int(1) ?? 0, locked: throttle?.int(2) ?? 0),
            databaseBytes: try count("SELECT pg_database_size(current_database())"), walBytes: 0)
    }

    // MARK: Doctor

    func diagnose(quick: Bool) -> [DoctorFinding] {
        var findings: [DoctorFinding] = []
        do {
            let row = try connection.queryOne("SELECT current_setting('server_version'), pg_is_in_recovery()::int, current_setting('data_checksums')")
            findings.append(DoctorFinding(.ok, "database.open", "\(location), PostgreSQL \(row?.string(0) ?? "?")"))
            findings.append(row?.int(1) == 1
                ? DoctorFinding(.fail, "database.role", "connected to a standby (in recovery): writes fail; list the primary first, "
                                + "or add target_session_attrs=read-write to GATEHOUSE_DATABASE_URL")
                : DoctorFinding(.ok, "database.role", "primary (accepts writes)"))
            findings.append(DoctorFinding(row?.string(2) == "on" ? .ok : .warn, "database.integrity",
                                          "data checksums \(row?.string(2) ?? "?") (PostgreSQL verifies pages as it reads them)"))
        } catch {
            return [DoctorFinding(.fail, "database.open", "\(location): \(error)")]
        }
        do {
            let current = try PostgreSQLIssuerSchema.currentVersion(connection) ?? 0
            findings.append(SchemaVersionFinding.of(current: current, expected: PostgreSQLIssuerSchema.migrations.map(\.version).max() ?? 0))
        } catch {
            findings.append(DoctorFinding(.fail, "database.schema", "no schema_migrations table (\(error)): run ssoctl setup"))
        }
        return findings
    }
}

/// Connection URLs as people may see them.
public enum PostgreSQLURL {
    /// `postgresql://user:secret@host/db` → `postgresql://user:***@host/db`.
    public static func redacted(_ url: String) -> String {
        let bytes = Array(url.utf8)
        guard let schemeEnd = (0..<max(0, bytes.count - 2)).first(where: { bytes[$0...$0 + 2].elementsEqual("://".utf8) }) else { return url }
        let start = schemeEnd + 3
        guard let at = bytes[start...].firstIndex(of: UInt8(ascii: "@")),
              let colon = bytes[start..<at].firstIndex(of: UInt8(ascii: ":")) else { return url }
        return String(decoding: bytes[..<colon], as: UTF8.self) + ":***" + String(decoding: bytes[at...], as: UTF8.self)
    }
}
