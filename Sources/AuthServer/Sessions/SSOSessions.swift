import IssuerStorage
import SSOCore

extension SSOSession {
    /// The authentication context class the session reached (OIDC Core §2 acr).
    public var acr: String { AuthenticationMethods.acr(for: amr) }
}

/// SSO sessions: the browser holds a random secret in the `sso_session`
/// cookie; the row is found by its hash. `sid` is a separate public id that
/// tokens carry (OIDC Front/Back-Channel Logout's `sid`).
public final class SSOSessions {
    public static let cookieName = "sso_session"
    let storage: any IssuerStorage
    let clock: Clock

    public init(storage: any IssuerStorage, clock: @escaping Clock = systemClock) {
        self.storage = storage
        self.clock = clock
    }

    /// Creates a session in the caller's write unit; returns it with the
    /// cookie secret (shown once).
    public func create(userID: Int64, lifetime: Int, amr: [String] = AuthenticationMethods.passwordOnly,
                       _ tx: any IssuerWrites) throws -> (session: SSOSession, secret: String) {
        let secret = SecureRandom.token()
        let now = clock()
        let session = SSOSession(sid: SecureRandom.token(byteCount: 16), userID: userID, authTime: now, expiresAt: now + Int64(lifetime),
                                 amr: amr)
        try tx.sessions.insert(session, secretHash: SecretHash.of(secret), createdAt: now)
        return (session, secret)
    }

    /// The live session behind a cookie value: not ended, not expired, and
    /// its user not disabled.
    public func find(secret: String) throws -> SSOSession? {
        guard !secret.isEmpty, secret.utf8.count <= 128 else { return nil }
        return try storage.read.sessions.live(secretHash: SecretHash.of(secret), now: clock())
    }

    /// The live session `sid` and its user (enabled), in one read.
    public func liveSignIn(sid: String) throws -> LiveSignIn? {
        try storage.read.sessions.liveSignIn(sid: sid, now: clock())
    }

    public func find(sid: String) throws -> SSOSession? {
        try storage.read.sessions.live(sid: sid, now: clock())
    }

    /// Every session, newest first, or only `userID`'s (for ssoctl).
    public func list(userID: Int64? = nil) throws -> [SSOSessionListing] {
        try storage.read.sessions.list(userID: userID, now: clock())
    }

    /// One session by sid, live or not; nil for an unknown sid.
    public func listing(sid: String) throws -> SSOSessionListing? {
        try storage.read.sessions.listing(sid: sid, now: clock())
    }
}
