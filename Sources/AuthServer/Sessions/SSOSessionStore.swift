import SSOCore

/// The one way a secret becomes a database key: SHA-256 of its text. Codes,
/// refresh tokens, session cookies and form tokens are never stored in clear.
public enum SecretHash {
    public static func of(_ secret: String) -> [UInt8] { SHA256.hash(secret) }
}

public struct SSOSession: Equatable, Sendable {
    public let sid: String
    public let userID: Int64
    public let authTime: Int64
    public let expiresAt: Int64
}

/// SSO sessions: the browser holds a random secret in the `sso_session`
/// cookie; the row is found by its hash. `sid` is a separate public id that
/// tokens carry (OIDC Front/Back-Channel Logout's `sid`).
public final class SSOSessionStore {
    public static let cookieName = "sso_session"
    let database: SQLiteDatabase
    let clock: Clock

    public init(database: SQLiteDatabase, clock: @escaping Clock = systemClock) {
        self.database = database
        self.clock = clock
    }

    /// Creates a session; returns it with the cookie secret (shown once).
    public func create(userID: Int64, lifetime: Int) throws -> (session: SSOSession, secret: String) {
        let secret = SecureRandom.token()
        let now = clock()
        let session = SSOSession(sid: SecureRandom.token(byteCount: 16), userID: userID, authTime: now, expiresAt: now + Int64(lifetime))
        try database.execute("""
            INSERT INTO sso_sessions (sid, secret_hash, user_id, auth_time, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)
            """, [.text(session.sid), .blob(SecretHash.of(secret)), .integer(userID), .integer(now), .integer(now), .integer(session.expiresAt)])
        return (session, secret)
    }

    /// The live session behind a cookie value: not ended, not expired, and
    /// its user not disabled.
    public func find(secret: String) throws -> SSOSession? {
        guard !secret.isEmpty, secret.utf8.count <= 128 else { return nil }
        return try database.queryOne("""
            SELECT s.sid, s.user_id, s.auth_time, s.expires_at FROM sso_sessions s JOIN users u ON u.id = s.user_id
            WHERE s.secret_hash = ? AND s.ended_at IS NULL AND s.expires_at > ? AND u.disabled = 0
            """, [.blob(SecretHash.of(secret)), .integer(clock())]).map(Self.session)
    }

    public func find(sid: String) throws -> SSOSession? {
        try database.queryOne("""
            SELECT s.sid, s.user_id, s.auth_time, s.expires_at FROM sso_sessions s JOIN users u ON u.id = s.user_id
            WHERE s.sid = ? AND s.ended_at IS NULL AND s.expires_at > ? AND u.disabled = 0
            """, [.text(sid), .integer(clock())]).map(Self.session)
    }

    public func end(sid: String) throws {
        try database.execute("UPDATE sso_sessions SET ended_at = ? WHERE sid = ? AND ended_at IS NULL", [.integer(clock()), .text(sid)])
    }

    /// Ends every live session of a user (password change, disabling);
    /// returns their sids so what is bound to them can be revoked too.
    @discardableResult
    public func endAll(userID: Int64) throws -> [String] {
        try database.query("UPDATE sso_sessions SET ended_at = ? WHERE user_id = ? AND ended_at IS NULL RETURNING sid",
                           [.integer(clock()), .integer(userID)]).map { $0.string(0) }
    }

    static func session(_ row: SQLiteRow) -> SSOSession {
        SSOSession(sid: row.string(0), userID: row.int(1), authTime: row.int(2), expiresAt: row.int(3))
    }
}
