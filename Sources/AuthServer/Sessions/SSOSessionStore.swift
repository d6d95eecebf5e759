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
    /// How the user authenticated (RFC 8176 values, e.g. ["pwd", "otp"]).
    public var amr: [String] = AuthenticationMethods.passwordOnly

    /// The authentication context class the session reached (OIDC Core §2 acr).
    public var acr: String { AuthenticationMethods.acr(for: amr) }
}

/// One session as `ssoctl sessions list` shows it, live or not.
public struct SSOSessionListing: Equatable, Sendable {
    public enum State: String, Sendable { case active, ended, expired, userDisabled = "user-disabled" }
    public let sid: String
    public let userID: Int64
    public let email: String
    public let authTime: Int64
    public let createdAt: Int64
    public let expiresAt: Int64
    public let endedAt: Int64?
    public let amr: [String]
    public let state: State
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
    public func create(userID: Int64, lifetime: Int, amr: [String] = AuthenticationMethods.passwordOnly) throws
        -> (session: SSOSession, secret: String) {
        let secret = SecureRandom.token()
        let now = clock()
        let session = SSOSession(sid: SecureRandom.token(byteCount: 16), userID: userID, authTime: now, expiresAt: now + Int64(lifetime),
                                 amr: amr)
        try database.execute("""
            INSERT INTO sso_sessions (sid, secret_hash, user_id, auth_time, created_at, expires_at, amr) VALUES (?, ?, ?, ?, ?, ?, ?)
            """, [.text(session.sid), .blob(SecretHash.of(secret)), .integer(userID), .integer(now), .integer(now), .integer(session.expiresAt),
                  .text(AuthenticationMethods.encode(amr))])
        return (session, secret)
    }

    /// The live session behind a cookie value: not ended, not expired, and
    /// its user not disabled.
    public func find(secret: String) throws -> SSOSession? {
        guard !secret.isEmpty, secret.utf8.count <= 128 else { return nil }
        return try database.queryOne("""
            SELECT s.sid, s.user_id, s.auth_time, s.expires_at, s.amr FROM sso_sessions s JOIN users u ON u.id = s.user_id
            WHERE s.secret_hash = ? AND s.ended_at IS NULL AND s.expires_at > ? AND u.disabled = 0
            """, [.blob(SecretHash.of(secret)), .integer(clock())]).map(Self.session)
    }

    public func find(sid: String) throws -> SSOSession? {
        try database.queryOne("""
            SELECT s.sid, s.user_id, s.auth_time, s.expires_at, s.amr FROM sso_sessions s JOIN users u ON u.id = s.user_id
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

    /// Every session, newest first, or only `userID`'s (for ssoctl).
    public func list(userID: Int64? = nil) throws -> [SSOSessionListing] {
        try database.query("""
            SELECT s.sid, s.user_id, u.email, s.auth_time, s.created_at, s.expires_at, s.ended_at, s.amr, u.disabled
            FROM sso_sessions s JOIN users u ON u.id = s.user_id
            WHERE ?1 IS NULL OR s.user_id = ?1 ORDER BY s.created_at DESC, s.sid
            """, [userID.map { .integer($0) } ?? .null]).map(listing)
    }

    /// One session by sid, live or not; nil for an unknown sid.
    public func listing(sid: String) throws -> SSOSessionListing? {
        try database.queryOne("""
            SELECT s.sid, s.user_id, u.email, s.auth_time, s.created_at, s.expires_at, s.ended_at, s.amr, u.disabled
            FROM sso_sessions s JOIN users u ON u.id = s.user_id WHERE s.sid = ?
            """, [.text(sid)]).map(listing)
    }

    func listing(_ row: SQLiteRow) -> SSOSessionListing {
        let endedAt = row.optionalInt(6)
        let state: SSOSessionListing.State = endedAt != nil ? .ended : row.int(5) <= clock() ? .expired : row.int(8) != 0 ? .userDisabled : .active
        return SSOSessionListing(sid: row.string(0), userID: row.int(1), email: row.string(2), authTime: row.int(3), createdAt: row.int(4),
                                 expiresAt: row.int(5), endedAt: endedAt, amr: AuthenticationMethods.decode(row.string(7)), state: state)
    }

    /// Every session a user ever had that the sweeper has not removed yet.
    public func allSIDs(userID: Int64) throws -> [String] {
        try database.query("SELECT sid FROM sso_sessions WHERE user_id = ?", [.integer(userID)]).map { $0.string(0) }
    }

    static func session(_ row: SQLiteRow) -> SSOSession {
        SSOSession(sid: row.string(0), userID: row.int(1), authTime: row.int(2), expiresAt: row.int(3),
                   amr: AuthenticationMethods.decode(row.string(4)))
    }
}
