import IssuerStorage
import SSOCore

extension SSOSession {
    /// The authentication context class the session reached (OIDC Core §2 acr).
    public var acr: String? { AuthenticationMethods.acr(for: amr) }
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
    /// cookie secret (shown once). `address` and `userAgent`: where the
    /// sign-in came from (the client address, the User-Agent header), kept
    /// for the account page as `storedOrigin` bounds them.
    public func create(userID: Int64, lifetime: Int, amr: [String] = AuthenticationMethods.passwordOnly,
                       address: String? = nil, userAgent: String? = nil,
                       _ tx: any IssuerWrites) throws -> (session: SSOSession, secret: String) {
        let secret = SecureRandom.token()
        let now = clock()
        let session = SSOSession(sid: SecureRandom.token(byteCount: 16), userID: userID, authTime: now, expiresAt: now + Int64(lifetime),
                                 amr: amr)
        try tx.sessions.insert(session, secretHash: SecretHash.of(secret), createdAt: now,
                               address: Self.storedOrigin(address), userAgent: Self.storedOrigin(userAgent))
        return (session, secret)
    }

    /// The longest address or User-Agent stored, in UTF-8 bytes.
    public static let originByteLimit = 256

    /// What is stored of a sign-in's address or User-Agent (text anyone can
    /// send, shown back on /account): control characters (Unicode Cc) and
    /// the bidirectional formatting characters (which would reorder the
    /// text around them on the page) dropped, then cut to
    /// `originByteLimit` bytes at a character boundary; nil when nothing is left.
    public static func storedOrigin(_ text: String?) -> String? {
        guard let text else { return nil }
        var kept = String.UnicodeScalarView(), bytes = 0
        for scalar in text.unicodeScalars where !isDropped(scalar) {
            let length = UTF8.width(scalar)
            guard bytes + length <= originByteLimit else { break }
            kept.append(scalar)
            bytes += length
        }
        let stored = String(kept)
        return stored.isEmpty ? nil : stored
    }

    static func isDropped(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.properties.generalCategory == .control { return true }
        switch scalar.value {
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: return true
        default: return false
        }
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

    /// One page of `list` (SSOSessionReads.page).
    public func page(userID: Int64?, after: (createdAt: Int64, sid: String)?, limit: Int) throws -> [SSOSessionListing] {
        try storage.read.sessions.page(userID: userID, after: after, limit: limit, now: clock())
    }

    /// `userID`'s live sessions, newest first, with where each began and
    /// its apps (for /account), in one read.
    public func liveListings(userID: Int64) throws -> [SSOSessionListing] {
        try storage.read.sessions.liveListings(userID: userID, now: clock())
    }

    /// One session by sid, live or not; nil for an unknown sid.
    public func listing(sid: String) throws -> SSOSessionListing? {
        try storage.read.sessions.listing(sid: sid, now: clock())
    }
}
