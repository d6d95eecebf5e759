/// Why a session ended, as `sso_sessions.ended_reason` keeps it and as a
/// refused refresh's `reason` says it (the token endpoint's `reason`
/// member; the app acts on it, API.md's table says how). Open, like
/// OutboxMessageKind, so a row written by a newer build still reads.
public struct SessionEndReason: RawRepresentable, Hashable, Sendable {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Signed out: RP-initiated logout, /account, `ssoctl sessions revoke`,
    /// a re-authentication that replaced the session, or its end of life.
    public static let sessionEnded = Self(rawValue: "session_ended")
    /// The password was changed or reset: every other sign-in ends.
    public static let passwordChanged = Self(rawValue: "password_changed")
    /// The account was disabled (or erased).
    public static let userDisabled = Self(rawValue: "user_disabled")
    /// A spent refresh token of the session came back (RFC 9700 §4.14.2):
    /// someone holds a copy, so the whole session ends.
    public static let refreshTokenReused = Self(rawValue: "refresh_token_reused")
}

/// A live SSO session.
public struct SSOSession: Equatable, Sendable {
    public let sid: String
    public let userID: Int64
    public let authTime: Int64
    public let expiresAt: Int64
    /// How the user authenticated (RFC 8176 values, e.g. ["pwd", "otp"]).
    public let amr: [String]

    public init(sid: String, userID: Int64, authTime: Int64, expiresAt: Int64, amr: [String]) {
        self.sid = sid
        self.userID = userID
        self.authTime = authTime
        self.expiresAt = expiresAt
        self.amr = amr
    }
}

/// A live session and its user, read together: what a grant needs to
/// issue tokens for a sign-in (the user's claims, the session's amr).
public struct LiveSignIn: Equatable, Sendable {
    public let session: SSOSession
    public let user: User

    public init(session: SSOSession, user: User) {
        self.session = session
        self.user = user
    }
}

/// One session as `ssoctl sessions list` and `/account` show it, live or not.
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
    /// Where the sign-in came from: the client address and the User-Agent
    /// header at sign-in, as stored (nil for sessions made before they were
    /// recorded, or without them).
    public let createdIP: String?
    public let userAgent: String?
    /// The apps (client ids, sorted, each once) holding a live refresh token
    /// or device secret in the session. Only `liveListings(userID:now:)`
    /// reads them; nil from `list` and `listing`.
    public let clientIDs: [String]?
    /// Why it ended (nil while live, and for sessions ended before reasons
    /// were kept).
    public let endedReason: SessionEndReason?

    public init(sid: String, userID: Int64, email: String, authTime: Int64, createdAt: Int64, expiresAt: Int64, endedAt: Int64?,
                amr: [String], state: State, createdIP: String? = nil, userAgent: String? = nil, clientIDs: [String]? = nil,
                endedReason: SessionEndReason? = nil) {
        self.sid = sid
        self.userID = userID
        self.email = email
        self.authTime = authTime
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.endedAt = endedAt
        self.amr = amr
        self.state = state
        self.createdIP = createdIP
        self.userAgent = userAgent
        self.clientIDs = clientIDs
        self.endedReason = endedReason
    }

    /// The client ids of the session's refresh tokens and device secrets as
    /// a query aggregated them (space-separated lists, either may be nil):
    /// each once, sorted by their bytes.
    public static func clientIDs(_ lists: String?...) -> [String] {
        Array(Set(lists.compactMap { $0 }.flatMap(StoredList.decode))).sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
    }

    /// The state from the row's times, the clock and the account.
    public static func state(endedAt: Int64?, expiresAt: Int64, userDisabled: Bool, now: Int64) -> State {
        endedAt != nil ? .ended : expiresAt <= now ? .expired : userDisabled ? .userDisabled : .active
    }
}

/// Live means: not ended, not expired, and its user not disabled.
public protocol SSOSessionReads {
    /// The live session whose cookie secret hashes to `secretHash`.
    func live(secretHash: [UInt8], now: Int64) throws -> SSOSession?
    func live(sid: String, now: Int64) throws -> SSOSession?
    /// The live session `sid` with its user, in one read.
    func liveSignIn(sid: String, now: Int64) throws -> LiveSignIn?
    /// Every session, newest first, or only `userID`'s.
    func list(userID: Int64?, now: Int64) throws -> [SSOSessionListing]
    /// Up to `limit` of those, after the session created at `after.createdAt`
    /// with sid `after.sid` in that order (newest first, then by sid as
    /// bytes): one page of a walk that resumes where the last one ended.
    func page(userID: Int64?, after: (createdAt: Int64, sid: String)?, limit: Int, now: Int64) throws -> [SSOSessionListing]
    /// One session by sid, live or not.
    func listing(sid: String, now: Int64) throws -> SSOSessionListing?
    /// `userID`'s live sessions, newest first, each with where it began and
    /// its apps (`clientIDs`: live refresh tokens, unused, unrevoked and
    /// unexpired; live device secrets): `/account`'s "Sessions and
    /// devices", in one query.
    func liveListings(userID: Int64, now: Int64) throws -> [SSOSessionListing]
    /// Every session a user has that the sweeper has not removed yet.
    func sids(userID: Int64) throws -> [String]
    /// The clients that were issued tokens in session `sid`, live or not,
    /// each once, sorted by their bytes: those `recordClient` noted (a code
    /// exchange, a Native SSO exchange) and those holding a refresh token or
    /// device secret of it. Back-channel logout's recipients.
    func clientsIssuedTokens(sid: String) throws -> [String]
}

public protocol SSOSessionStore: SSOSessionReads {
    /// `address` and `userAgent`: where the sign-in came from, stored as
    /// given (SSOSessions.create bounds and cleans them first).
    func insert(_ session: SSOSession, secretHash: [UInt8], createdAt: Int64, address: String?, userAgent: String?) throws
    /// Ends the session for `reason`; true when it was not ended before
    /// (the caller's cue to tell its apps), false for an ended or unknown one.
    @discardableResult
    func end(sid: String, at now: Int64, reason: SessionEndReason) throws -> Bool
    /// Ends every live session of the user for `reason`; returns their sids.
    func endAll(userID: Int64, at now: Int64, reason: SessionEndReason) throws -> [String]
    /// Notes that `clientID` was issued tokens in session `sid` (once: a
    /// client already noted changes nothing, and costs no write).
    func recordClient(_ clientID: String, sid: String) throws
    /// Deletes every session row of the user, live, ended or expired
    /// (erasure); returns how many. What is bound to them (refresh tokens,
    /// device secrets, codes) is the caller's to delete in the same write unit.
    func deleteAll(userID: Int64) throws -> Int
}

extension SSOSessionStore {
    /// A plain sign-out.
    @discardableResult
    public func end(sid: String, at now: Int64) throws -> Bool { try end(sid: sid, at: now, reason: .sessionEnded) }
    public func endAll(userID: Int64, at now: Int64) throws -> [String] { try endAll(userID: userID, at: now, reason: .sessionEnded) }

    /// A session with no record of where it came from.
    public func insert(_ session: SSOSession, secretHash: [UInt8], createdAt: Int64) throws {
        try insert(session, secretHash: secretHash, createdAt: createdAt, address: nil, userAgent: nil)
    }
}
