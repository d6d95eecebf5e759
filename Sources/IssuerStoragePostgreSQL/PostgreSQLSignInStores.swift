import IssuerStorage
import PostgreSQLClient

/// `sso_sessions`, by the hash of the cookie secret or by sid.
final class PostgreSQLSSOSessionStore: SSOSessionStore {
    let connection: PostgreSQLConnection
    init(connection: PostgreSQLConnection) { self.connection = connection }

    static let liveColumns = "s.sid, s.user_id, s.auth_time, s.expires_at, s.amr"
    static let listingColumns = """
        s.sid, s.user_id, u.email, s.auth_time, s.created_at, s.expires_at, s.ended_at, s.amr, u.disabled, s.created_ip, s.user_agent,
        s.ended_reason
        """

    func live(secretHash: [UInt8], now: Int64) throws -> SSOSession? {
        try connection.lookupOne("""
            SELECT \(Self.liveColumns) FROM sso_sessions s JOIN users u ON u.id = s.user_id
            WHERE s.secret_hash = $1 AND s.ended_at IS NULL AND s.expires_at > $2 AND u.disabled = 0
            """, [.bytes(secretHash), .integer(now)]).map(Self.session)
    }

    func liveSignIn(sid: String, now: Int64) throws -> LiveSignIn? {
        try connection.lookupOne("""
            SELECT \(Self.liveColumns), u.id, u.subject, u.email, u.name, u.password_hash, u.roles, u.disabled, u.email_verified
            FROM sso_sessions s JOIN users u ON u.id = s.user_id
            WHERE s.sid = $1 AND s.ended_at IS NULL AND s.expires_at > $2 AND u.disabled = 0
            """, [.text(sid), .integer(now)]).map { LiveSignIn(session: Self.session($0), user: PostgreSQLUserStore.user($0, from: 5)) }
    }

    func live(sid: String, now: Int64) throws -> SSOSession? {
        try connection.lookupOne("""
            SELECT \(Self.liveColumns) FROM sso_sessions s JOIN users u ON u.id = s.user_id
            WHERE s.sid = $1 AND s.ended_at IS NULL AND s.expires_at > $2 AND u.disabled = 0
            """, [.text(sid), .integer(now)]).map(Self.session)
    }

    func list(userID: Int64?, now: Int64) throws -> [SSOSessionListing] {
        try connection.lookup("""
            SELECT \(Self.listingColumns) FROM sso_sessions s JOIN users u ON u.id = s.user_id
            WHERE $1::bigint IS NULL OR s.user_id = $1::bigint ORDER BY s.created_at DESC, s.sid COLLATE "C"
            """, [PostgreSQLValue(userID)]).map { Self.listing($0, now: now) }
    }

    func page(userID: Int64?, after: (createdAt: Int64, sid: String)?, limit: Int, now: Int64) throws -> [SSOSessionListing] {
        try connection.lookup("""
            SELECT \(Self.listingColumns) FROM sso_sessions s JOIN users u ON u.id = s.user_id
            WHERE ($1::bigint IS NULL OR s.user_id = $1::bigint)
              AND ($2::bigint IS NULL OR s.created_at < $2::bigint OR (s.created_at = $2::bigint AND s.sid COLLATE "C" > $3::text))
            ORDER BY s.created_at DESC, s.sid COLLATE "C" LIMIT $4
            """, [PostgreSQLValue(userID), PostgreSQLValue(after?.createdAt), .text(after?.sid ?? ""), .integer(Int64(limit))])
            .map { Self.listing($0, now: now) }
    }

    func listing(sid: String, now: Int64) throws -> SSOSessionListing? {
        try connection.lookupOne("SELECT \(Self.listingColumns) FROM sso_sessions s JOIN users u ON u.id = s.user_id WHERE s.sid = $1",
                                [.text(sid)]).map { Self.listing($0, now: now) }
    }

    /// One statement: the apps of each session are two correlated
    /// aggregates on the sid indexes of refresh_tokens and device_secrets.
    func liveListings(userID: Int64, now: Int64) throws -> [SSOSessionListing] {
        try connection.lookup("""
            SELECT \(Self.listingColumns),
                   (SELECT string_agg(DISTINCT r.client_id, ' ') FROM refresh_tokens r
                    WHERE r.sid = s.sid AND r.used_at IS NULL AND r.revoked_at IS NULL AND r.expires_at > $2),
                   (SELECT string_agg(DISTINCT d.client_id, ' ') FROM device_secrets d
                    WHERE d.sid = s.sid AND d.revoked_at IS NULL AND d.expires_at > $2)
            FROM sso_sessions s JOIN users u ON u.id = s.user_id
            WHERE s.user_id = $1 AND s.ended_at IS NULL AND s.expires_at > $2 AND u.disabled = 0
            ORDER BY s.created_at DESC, s.sid COLLATE "C"
            """, [.integer(userID), .integer(now)]).map {
            Self.listing($0, now: now, clientIDs: SSOSessionListing.clientIDs($0.optionalString(12), $0.optionalString(13)))
        }
    }

    func sids(userID: Int64) throws -> [String] {
        try connection.lookup("SELECT sid FROM sso_sessions WHERE user_id = $1", [.integer(userID)]).map { $0.string(0) }
    }

    func insert(_ session: SSOSession, secretHash: [UInt8], createdAt: Int64, address: String?, userAgent: String?) throws {
        try connection.execute("""
            INSERT INTO sso_sessions (sid, secret_hash, user_id, auth_time, created_at, expires_at, amr, created_ip, user_agent)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
            """, [.text(session.sid), .bytes(secretHash), .integer(session.userID), .integer(session.authTime), .integer(createdAt),
                  .integer(session.expiresAt), .text(StoredList.encode(session.amr)), PostgreSQLValue(address), PostgreSQLValue(userAgent)])
    }

    func end(sid: String, at now: Int64, reason: SessionEndReason) throws -> Bool {
        try connection.execute("UPDATE sso_sessions SET ended_at = $1, ended_reason = $2 WHERE sid = $3 AND ended_at IS NULL",
                               [.integer(now), .text(reason.rawValue), .text(sid)]) == 1
    }

    func endAll(userID: Int64, at now: Int64, reason: SessionEndReason) throws -> [String] {
        try connection.lookup("""
            UPDATE sso_sessions SET ended_at = $1, ended_reason = $2 WHERE user_id = $3 AND ended_at IS NULL RETURNING sid
            """, [.integer(now), .text(reason.rawValue), .integer(userID)]).map { $0.string(0) }
    }

    /// The WHERE clause finds the id as a whole word of the list (client
    /// ids hold no spaces), so a client noted before costs no write. A
    /// lookup (RETURNING): a sid with a NUL byte names no session.
    func recordClient(_ clientID: String, sid: String) throws {
        _ = try connection.lookup("""
            UPDATE sso_sessions SET client_ids = ltrim(client_ids || ' ' || $1)
            WHERE sid = $2 AND strpos(' ' || client_ids || ' ', ' ' || $1 || ' ') = 0 RETURNING sid
            """, [.text(clientID), .text(sid)])
    }

    func clientsIssuedTokens(sid: String) throws -> [String] {
        let row = try connection.lookupOne("""
            SELECT s.client_ids,
                   (SELECT string_agg(DISTINCT r.client_id, ' ') FROM refresh_tokens r WHERE r.sid = s.sid),
                   (SELECT string_agg(DISTINCT d.client_id, ' ') FROM device_secrets d WHERE d.sid = s.sid)
            FROM sso_sessions s WHERE s.sid = $1
            """, [.text(sid)])
        return row.map { SSOSessionListing.clientIDs($0.string(0), $0.optionalString(1), $0.optionalString(2)) } ?? []
    }

    /// Indexed on user_id.
    func deleteAll(userID: Int64) throws -> Int {
        try connection.execute("DELETE FROM sso_sessions WHERE user_id = $1", [.integer(userID)])
    }

    static func session(_ row: PostgreSQLRow) -> SSOSession {
        SSOSession(sid: row.string(0), userID: row.int(1), authTime: row.int(2), expiresAt: row.int(3), amr: StoredList.decodeAMR(row.string(4)))
    }

    static func listing(_ row: PostgreSQLRow, now: Int64, clientIDs: [String]? = nil) -> SSOSessionListing {
        let endedAt = row.optionalInt(6)
        return SSOSessionListing(sid: row.string(0), userID: row.int(1), email: row.string(2), authTime: row.int(3), createdAt: row.int(4),
                                 expiresAt: row.int(5), endedAt: endedAt, amr: StoredList.decodeAMR(row.string(7)),
                                 state: SSOSessionListing.state(endedAt: endedAt, expiresAt: row.int(5), userDisabled: row.int(8) != 0, now: now),
                                 createdIP: row.optionalString(9), userAgent: row.optionalString(10), clientIDs: clientIDs,
                                 endedReason: row.optionalString(11).map { SessionEndReason(rawValue: $0) })
    }
}

/// `pending_authorizations`, by the hash of the `gh_login` cookie secret.
final class PostgreSQLPendingAuthorizationStore: PendingAuthorizationStore {
    let connection: PostgreSQLConnection
    init(connection: PostgreSQLConnection) { self.connection = connection }

    static let columns = """
        client_id, redirect_uri, scope, state, nonce, code_challenge, max_age, replaces_sid, form_token_hash, expected_subject, dpop_jkt
        """

    func find(secretHash: [UInt8], now: Int64) throws -> PendingAuthorization? {
        try connection.lookupOne("SELECT \(Self.columns) FROM pending_authorizations WHERE secret_hash = $1 AND expires_at > $2",
                                [.bytes(secretHash), .integer(now)]).map(Self.pending)
    }

    func markedUserID(secretHash: [UInt8], now: Int64, markedAfter: Int64) throws -> Int64? {
        try connection.lookupOne("""
            SELECT password_verified_user_id FROM pending_authorizations
            WHERE secret_hash = $1 AND expires_at > $2 AND password_verified_user_id IS NOT NULL AND password_verified_at > $3
            """, [.bytes(secretHash), .integer(now), .integer(markedAfter)])?.optionalInt(0)
    }

    func insert(_ pending: PendingAuthorization, secretHash: [UInt8], createdAt: Int64, expiresAt: Int64) throws {
        // Opportunistic sweep: expired pending requests are worthless.
        try connection.execute("DELETE FROM pending_authorizations WHERE expires_at <= $1", [.integer(createdAt)])
        let request = pending.request
        try connection.execute("""
            INSERT INTO pending_authorizations (secret_hash, form_token_hash, client_id, redirect_uri, scope, state, nonce,
                code_challenge, max_age, replaces_sid, created_at, expires_at, expected_subject, dpop_jkt)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
            """, [.bytes(secretHash), .bytes(pending.formTokenHash), .text(request.clientID), .text(request.redirectURI),
                  .text(StoredList.encode(request.scope)), PostgreSQLValue(request.state), PostgreSQLValue(request.nonce),
                  .text(request.codeChallenge), PostgreSQLValue(request.maxAge.map(Int64.init)), PostgreSQLValue(pending.replacesSID),
                  .integer(createdAt), .integer(expiresAt), PostgreSQLValue(request.expectedSubject),
                  PostgreSQLValue(request.dpopJKT)])
    }

    func consume(secretHash: [UInt8], now: Int64) throws -> PendingAuthorization? {
        try connection.lookupOne("DELETE FROM pending_authorizations WHERE secret_hash = $1 AND expires_at > $2 RETURNING \(Self.columns)",
                                [.bytes(secretHash), .integer(now)]).map(Self.pending)
    }

    func mark(secretHash: [UInt8], userID: Int64, now: Int64) throws -> Bool {
        try connection.execute("""
            UPDATE pending_authorizations SET password_verified_user_id = $1, password_verified_at = $2
            WHERE secret_hash = $3 AND expires_at > $2
            """, [.integer(userID), .integer(now), .bytes(secretHash)]) == 1
    }

    func consumeMarked(secretHash: [UInt8], userID: Int64, now: Int64, markedAfter: Int64) throws -> PendingAuthorization? {
        try connection.lookupOne("""
            DELETE FROM pending_authorizations
            WHERE secret_hash = $1 AND expires_at > $2 AND password_verified_user_id = $3 AND password_verified_at > $4
            RETURNING \(Self.columns)
            """, [.bytes(secretHash), .integer(now), .integer(userID), .integer(markedAfter)]).map(Self.pending)
    }

    func clearMarks(userID: Int64) throws {
        try connection.execute("""
            UPDATE pending_authorizations SET password_verified_user_id = NULL, password_verified_at = NULL
            WHERE password_verified_user_id = $1
            """, [.integer(userID)])
    }

    func deleteAll(userID: Int64, subject: String) throws -> Int {
        try connection.execute("DELETE FROM pending_authorizations WHERE password_verified_user_id = $1 OR expected_subject = $2",
                               [.integer(userID), .text(subject)])
    }

    static func pending(_ row: PostgreSQLRow) -> PendingAuthorization {
        var request = AuthorizationRequest(
            clientID: row.string(0), redirectURI: row.string(1), scope: StoredList.decode(row.string(2)), state: row.optionalString(3),
            nonce: row.optionalString(4), codeChallenge: row.string(5), prompt: [], maxAge: row.optionalInt(6).map(Int.init),
            loginHint: nil, expectedSubject: row.optionalString(9))
        request.dpopJKT = row.optionalString(10)
        return PendingAuthorization(request: request, formTokenHash: row.bytes(8), replacesSID: row.optionalString(7))
    }
}

/// `login_throttle`: one `INSERT … ON CONFLICT DO UPDATE … RETURNING` per
/// attempt; the row lock serializes concurrent attempts on one key across
/// every node.
final class PostgreSQLLoginThrottleStore: LoginThrottleStore {
    let connection: PostgreSQLConnection
    init(connection: PostgreSQLConnection) { self.connection = connection }

    func lockedUntil(key: [UInt8], now: Int64) throws -> Int64? {
        try connection.lookupOne("SELECT locked_until FROM login_throttle WHERE key_hash = $1 AND locked_until > $2",
                                [.bytes(key), .integer(now)])?.int(0)
    }

    /// In DO UPDATE, `t.` names the row's old values (as in SQLite's version).
    func reserve(key: [UInt8], policy: ThrottlePolicy, now: Int64) throws -> Int64? {
        let row = try connection.lookupOne("""
            INSERT INTO login_throttle AS t (key_hash, failures, window_started_at, locked_until, admitted) VALUES ($1, 1, $2, 0, 1)
            ON CONFLICT (key_hash) DO UPDATE SET
                admitted = CASE WHEN t.locked_until <= $2 THEN 1 ELSE 0 END,
                failures = CASE WHEN t.locked_until > $2 THEN t.failures
                                WHEN t.window_started_at <= $2 - $4 AND t.locked_until <= $2 - $4 THEN 1
                                ELSE t.failures + 1 END,
                window_started_at = CASE WHEN t.window_started_at <= $2 - $4 AND t.locked_until <= $2 - $4 THEN $2
                                         ELSE t.window_started_at END,
                locked_until = CASE WHEN t.locked_until > $2 THEN t.locked_until
                                    WHEN t.window_started_at <= $2 - $4 AND t.locked_until <= $2 - $4 THEN 0
                                    WHEN t.failures + 1 >= $3 THEN $2 + LEAST($5 << LEAST(t.failures + 1 - $3, 20)::int, $6)
                                    ELSE t.locked_until END
            RETURNING admitted, locked_until
            """, [.bytes(key), .integer(now), .integer(Int64(policy.maximumFailures)), .integer(Int64(policy.window)),
                  .integer(Int64(policy.firstLockDuration)), .integer(Int64(policy.longestLockDuration))])
        guard let row, row.int(0) != 1 else { return nil }
        return row.int(1)
    }

    func refund(key: [UInt8], policy: ThrottlePolicy, now: Int64) throws {
        try connection.execute("""
            UPDATE login_throttle SET failures = failures - 1,
                locked_until = CASE WHEN failures - 1 < $2 THEN 0 WHEN locked_until > $3 THEN $3 ELSE locked_until END
            WHERE key_hash = $1 AND failures > 0
            """, [.bytes(key), .integer(Int64(policy.maximumFailures)), .integer(now)])
    }

    func reset(key: [UInt8]) throws {
        try connection.execute("DELETE FROM login_throttle WHERE key_hash = $1", [.bytes(key)])
    }

    func sweep(horizon: Int64) throws {
        try connection.execute("DELETE FROM login_throttle WHERE window_started_at <= $1 AND locked_until <= $1", [.integer(horizon)])
    }
}
