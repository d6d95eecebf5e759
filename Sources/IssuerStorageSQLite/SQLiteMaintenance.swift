import IssuerStorage
import SQLiteClient

/// Sweeping, counting and checking the SQLite file.
struct SQLiteMaintenance: StorageMaintenance {
    let database: SQLiteDatabase
    let keysDirectory: String

    var location: String { database.path }

    // MARK: Sweep

    /// What one sweep removes, table by table; each condition says why the
    /// rows are worthless.
    func rules(_ policy: SweepPolicy) -> [(table: String, condition: String, values: [SQLiteValue])] {
        let now = policy.now
        return [
            ("pending_authorizations", "expires_at <= ?", [.integer(now)]),
            // A trip to an upstream provider, and the link it may offer, end
            // with it (taken ones stay until then for their offer).
            ("federation_requests", "expires_at <= ?", [.integer(now)]),
            // Unused codes die at expiry; used ones are kept while the tokens
            // they issued may live, so a proven replay can still revoke them.
            ("authorization_codes", "(used_at IS NULL AND expires_at <= ?) OR expires_at <= ?",
             [.integer(now), .integer(now - policy.refreshTokenLifetime)]),
            ("refresh_tokens", "expires_at <= ?", [.integer(now - policy.refreshGracePeriod)]),
            ("revoked_access_tokens", "expires_at <= ?", [.integer(now - policy.accessTokenLeeway)]),
            // A pushed request is good until it expires or is used once;
            // a proof's jti is remembered only for its acceptance window.
            ("pushed_authorizations", "expires_at <= ? OR used_at IS NOT NULL", [.integer(now)]),
            ("dpop_proofs", "expires_at <= ?", [.integer(now)]),
            // An initial access token is good until it expires or its uses are spent.
            ("initial_access_tokens", "expires_at <= ? OR uses_left <= 0", [.integer(now)]),
            // A WebAuthn challenge is good until it expires or is used once.
            ("webauthn_challenges", "expires_at <= ? OR used_at IS NOT NULL", [.integer(now)]),
            // A revoked or expired device secret can never be accepted again.
            ("device_secrets", "revoked_at IS NOT NULL OR expires_at <= ?", [.integer(now)]),
            // Ended or expired sessions stay a while for `ssoctl sessions list`,
            // and as long as any refresh token still names them.
            ("sso_sessions", """
                coalesce(ended_at, expires_at) <= ? AND (ended_at IS NOT NULL OR expires_at <= ?)
                AND NOT EXISTS (SELECT 1 FROM refresh_tokens r WHERE r.sid = sso_sessions.sid)
                """, [.integer(now - policy.endedSessionRetention), .integer(now)]),
            // Delivered mail is kept a week, mail that failed for good a
            // month; mail still on its way is never swept.
            ("mail_outbox", "sent_at <= ? OR failed_at <= ?",
             [.integer(now - policy.sentMailRetention), .integer(now - policy.failedMailRetention)]),
            // A mailed link is worthless once expired (used and voided ones
            // included: they were refused by their use, and are by expiry now).
            ("account_links", "expires_at <= ?", [.integer(now)]),
            // A sign-up (a password, never verified) with no live link, made
            // long ago: it never signed in (no session can name it), and its
            // links, TOTP and passkeys go by ON DELETE CASCADE. Invited
            // accounts (no password yet) are an administrator's to remove.
            ("users", """
                email_verified = 0 AND password_hash <> '' AND created_at <= ?
                AND NOT EXISTS (SELECT 1 FROM sso_sessions s WHERE s.user_id = users.id)
                AND NOT EXISTS (SELECT 1 FROM account_links l WHERE l.user_id = users.id AND l.used_at IS NULL AND l.expires_at > ?)
                """, [.integer(now - policy.unverifiedSignUpRetention), .integer(now)]),
        ]
    }

    func sweep(_ policy: SweepPolicy, batch: Int) throws -> [String: Int] {
        var removed: [String: Int] = [:]
        for rule in rules(policy) {
            var total = 0
            while true {
                let pacing = SweepPacing()
                let count = try database.execute("""
                    DELETE FROM \(rule.table) WHERE rowid IN (SELECT rowid FROM \(rule.table) WHERE \(rule.condition) LIMIT ?)
                    """, rule.values + [.integer(Int64(batch))])
                total += count
                if count < batch { break }
                pacing.rest(afterRemoving: count, of: batch)
            }
            removed[rule.table] = total
        }
        // The grace window is over: drop the sealed copies of successors.
        removed["sealed successors"] = try database.execute("""
            UPDATE refresh_tokens SET successor_sealed = NULL WHERE successor_sealed IS NOT NULL AND used_at <= ?
            """, [.integer(policy.now - policy.refreshGracePeriod)])
        return removed
    }

    // MARK: Readiness

    func recordReadinessProbe(node: String, now: Int64) throws {
        try database.transaction {
            _ = try database.execute("""
                INSERT INTO readiness_probes (node, written_at) VALUES (?, ?)
                ON CONFLICT (node) DO UPDATE SET written_at = excluded.written_at
                """, [.text(node), .integer(now)])
        }
    }

    // MARK: Statistics

    func statistics(now: Int64) throws -> IssuerStatistics {
        try SQLiteStatisticsQuery(database: database).gather(now: now)
    }

    // MARK: Doctor

    func diagnose(quick: Bool) -> [DoctorFinding] {
        var detail = "\(database.path), \(fileSize(database.path)) bytes"
        let wal = fileSize(database.path + "-wal")
        if wal > 0 { detail += " (+ \(wal) bytes WAL)" }
        return [DoctorFinding(.ok, "database.open", detail), integrity(quick: quick), schema(), journal()]
    }

    func integrity(quick: Bool) -> DoctorFinding {
        let pragma = quick ? "quick_check" : "integrity_check"
        do {
            let messages = try database.query("PRAGMA \(pragma)").map { $0.string(0) }
            if messages == ["ok"] { return DoctorFinding(.ok, "database.integrity", "PRAGMA \(pragma): ok") }
            let shown = messages.prefix(3).joined(separator: "; ")
            return DoctorFinding(.fail, "database.integrity", "PRAGMA \(pragma): \(shown)" + (messages.count > 3 ? " (\(messages.count) problems)" : ""))
        } catch {
            return DoctorFinding(.fail, "database.integrity", "PRAGMA \(pragma): \(error)")
        }
    }

    func schema() -> DoctorFinding {
        let expected = SQLiteIssuerSchema.migrations.map(\.version).max() ?? 0
        let current: Int64
        do {
            guard let row = try database.queryOne("SELECT version FROM schema_migrations WHERE component = 'issuer'") else {
                return DoctorFinding(.fail, "database.schema", "no issuer schema recorded: run ssoctl setup")
            }
            current = row.int(0)
        } catch {
            return DoctorFinding(.fail, "database.schema", "no schema_migrations table (\(error)): run ssoctl setup")
        }
        return SchemaVersionFinding.of(current: Int(current), expected: expected)
    }

    func journal() -> DoctorFinding {
        do {
            let mode = try database.queryOne("PRAGMA journal_mode")?.string(0).lowercased() ?? "?"
            if mode == "wal" { return DoctorFinding(.ok, "database.journal", "WAL") }
            return DoctorFinding(.warn, "database.journal", "journal_mode is \(mode), not WAL: readers and writers block each other")
        } catch {
            return DoctorFinding(.fail, "database.journal", "PRAGMA journal_mode: \(error)")
        }
    }

    func fileSize(_ path: String) -> Int64 { SQLiteFileSize.of(path) }
}
