import IssuerStorage
import SQLiteClient

/// `sso_sessions`, found by the hash of the cookie secret or by sid.
final class SQLiteSSOSessionStore: SSOSessionStore {
    let database: SQLiteDatabase
    init(database: SQLiteDatabase) { self.database = database }

    static let liveColumns = "s.sid, s.user_id, s.auth_time, s.expires_at, s.amr"

    func live(secretHash: [UInt8], now: Int64) throws -> SSOSession? {
        try database.queryOne("""
            SELECT \(Self.liveColumns) FROM sso_sessions s JOIN users u ON u.id = s.user_id
            WHERE s.secret_hash = ? AND s.ended_at IS NULL AND s.expires_at > ? AND u.disabled = 0
            """, [.blob(secretHash), .integer(now)]).map(Self.session)
    }

    func live(sid: String, now: Int64) throws -> SSOSession? {
        try database.queryOne("""
            SELECT \(Self.liveColumns) FROM sso_sessions s JOIN users u ON u.id = s.user_id
            WHERE s.sid = ? AND s.ended_at IS NULL AND s.expires_at > ? AND u.disabled = 0
            """, [.text(sid), .integer(now)]).map(Self.session)
    }

    func liveSignIn(sid: String, now: Int64) throws -> LiveSignIn? {
        try database.queryOne("""
            SELECT \(Self.liveColumns), \(Self.userColumns) FROM sso_sessions s JOIN users u ON u.id = s.user_id
            WHERE s.sid = ? AND s.ended_at IS NULL AND s.expires_at > ? AND u.disabled = 0
            """, [.text(sid), .integer(now)]).map { LiveSignIn(session: Self.session($0), user: SQLiteUserStore.user($0, from: 5)) }
    }

    static let userColumns = "u.id, u.subject, u.email, u.name, u.password_hash, u.roles, u.disabled, u.email_verified"
    static let listingColumns = """
        s.sid, s.user_id, u.email, s.auth_time, s.created_at, s.expires_at, s.ended_at, s.amr, u.disabled, s.created_ip, s.user_agent,
        s.ended_reason
        """

    func list(userID: Int64?, now: Int64) throws -> [SSOSessionListing] {
        try database.query("""
            SELECT \(Self.listingColumns) FROM sso_sessions s JOIN users u ON u.id = s.user_id
            WHERE ?1 IS NULL OR s.user_id = ?1 ORDER BY s.created_at DESC, s.sid
            """, [userID.map { .integer($0) } ?? .null]).map { Self.listing($0, now: now) }
    }

    func page(userID: Int64?, after: (createdAt: Int64, sid: String)?, limit: Int, now: Int64) throws -> [SSOSessionListing] {
        try database.query("""
            SELECT \(Self.listingColumns) FROM sso_sessions s JOIN users u ON u.id = s.user_id
            WHERE (?1 IS NULL OR s.user_id = ?1) AND (?2 IS NULL OR s.created_at < ?2 OR (s.created_at = ?2 AND s.sid > ?3))
            ORDER BY s.created_at DESC, s.sid LIMIT ?4
            """, [userID.map { .integer($0) } ?? .null, after.map { .integer($0.createdAt) } ?? .null, .text(after?.sid ?? ""),
                  .integer(Int64(limit))]).map { Self.listing($0, now: now) }
    }

    func listing(sid: String, now: Int64) throws -> SSOSessionListing? {
        try database.queryOne("""
            SELECT \(Self.listingColumns) FROM sso_sessions s JOIN users u ON u.id = s.user_id WHERE s.sid = ?
            """, [.text(sid)]).map { Self.listing($0, now: now) }
    }

    /// One statement: the apps of each session are two correlated
    /// aggregates on the sid indexes of refresh_tokens and device_secrets
    /// (client ids hold no spaces: ClientRegistry.validate).
    func liveListings(userID: Int64, now: Int64) throws -> [SSOSessionListing] {
        try database.query("""
            SELECT \(Self.listingColumns),
                   (SELECT group_concat(r.client_id, ' ') FROM refresh_tokens r
                    WHERE r.sid = s.sid AND r.used_at IS NULL AND r.revoked_at IS NULL AND r.expires_at > ?2),
                   (SELECT group_concat(d.client_id, ' ') FROM device_secrets d
                    WHERE d.sid = s.sid AND d.revoked_at IS NULL AND d.expires_at > ?2)
            FROM sso_sessions s JOIN users u ON u.id = s.user_id
            WHERE s.user_id = ?1 AND s.ended_at IS NULL AND s.expires_at > ?2 AND u.disabled = 0
            ORDER BY s.created_at DESC, s.sid
            """, [.integer(userID), .integer(now)]).map {
            Self.listing($0, now: now, clientIDs: SSOSessionListing.clientIDs($0.optionalString(12), $0.optionalString(13)))
        }
    }

    func sids(userID: Int64) throws -> [String] {
        try database.query("SELECT sid FROM sso_sessions WHERE user_id = ?", [.integer(userID)]).map { $0.string(0) }
    }

    func insert(_ session: SSOSession, secretHash: [UInt8], createdAt: Int64, address: String?, userAgent: String?) throws {
        try database.execute("""
            INSERT INTO sso_sessions (sid, secret_hash, user_id, auth_time, created_at, expires_at, amr, created_ip, user_agent)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, [.text(session.sid), .blob(secretHash), .integer(session.userID), .integer(session.authTime), .integer(createdAt),
                  .integer(session.expiresAt), .text(StoredList.encode(session.amr)), SQLiteValue(address), SQLiteValue(userAgent)])
    }

    func end(sid: String, at now: Int64, reason: SessionEndReason) throws -> Bool {
        try database.execute("UPDATE sso_sessions SET ended_at = ?, ended_reason = ? WHERE sid = ? AND ended_at IS NULL",
                             [.integer(now), .text(reason.rawValue), .text(sid)]) == 1
    }

    func endAll(userID: Int64, at now: Int64, reason: SessionEndReason) throws -> [String] {
        try database.query("UPDATE sso_sessions SET ended_at = ?, ended_reason = ? WHERE user_id = ? AND ended_at IS NULL RETURNING sid",
                           [.integer(now), .text(reason.rawValue), .integer(userID)]).map { $0.string(0) }
    }

    /// The WHERE clause finds the id as a whole word of the list (client
    /// ids hold no spaces), so a client noted before costs no write.
    func recordClient(_ clientID: String, sid: String) throws {
        try database.execute("""
            UPDATE sso_sessions SET client_ids = ltrim(client_ids || ' ' || ?1)
            WHERE sid = ?2 AND instr(' ' || client_ids || ' ', ' ' || ?1 || ' ') = 0
            """, [.text(clientID), .text(sid)])
    }

    func clientsIssuedTokens(sid: String) throws -> [String] {
        let row = try database.queryOne("""
            SELECT s.client_ids,
                   (SELECT group_concat(r.client_id, ' ') FROM refresh_tokens r WHERE r.sid = s.sid),
                   (SELECT group_concat(d.client_id, ' ') FROM device_secrets d WHERE d.sid = s.sid)
            FROM sso_sessions s WHERE s.sid = ?
            """, [.text(sid)])
        return row.map { SSOSessionListing.clientIDs($0.string(0), $0.optionalString(1), $0.optionalString(2)) } ?? []
    }

    /// Indexed on user_id.
    func deleteAll(userID: Int64) throws -> Int {
        try database.execute("DELETE FROM sso_sessions WHERE user_id = ?", [.integer(userID)])
    }

    static func session(_ row: SQLiteRow) -> SSOSession {
        SSOSession(sid: row.string(0), userID: row.int(1), authTime: row.int(2), expiresAt: row.int(3), amr: StoredList.decodeAMR(row.string(4)))
    }

    static func listing(_ row: SQLiteRow, now: Int64, clientIDs: [String]? = nil) -> SSOSessionListing {
        let endedAt = row.optionalInt(6)
        return SSOSessionListing(sid: row.string(0), userID: row.int(1), email: row.string(2), authTime: row.int(3), createdAt: row.int(4),
                                 expiresAt: row.int(5), endedAt: endedAt, amr: StoredList.decodeAMR(row.string(7)),
                                 state: SSOSessionListing.state(endedAt: endedAt, expiresAt: row.int(5), userDisabled: row.int(8) != 0, now: now),
                                 createdIP: row.optionalString(9), userAgent: row.optionalString(10), clientIDs: clientIDs,
                                 endedReason: row.optionalString(11).map { SessionEndReason(rawValue: $0) })
    }
}
