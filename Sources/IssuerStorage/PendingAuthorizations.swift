/// A validated authorization request (RFC 6749 §4.1.1, OIDC Core §3.1.2.1),
/// as the pending-authorization store keeps it while the user signs in.
public struct AuthorizationRequest: Equatable, Sendable {
    public let clientID: String
    public let redirectURI: String
    public let scope: [String]
    public let state: String?
    public let nonce: String?
    public let codeChallenge: String
    public let prompt: Set<String>
    public let maxAge: Int?
    public let loginHint: String?
    /// The `sub` of a verified `id_token_hint`: only that user may be
    /// answered (OIDC Core §3.1.2.1).
    public var expectedSubject: String?
    /// RFC 9449 §10: the `dpop_jkt` the code is to be bound to.
    public var dpopJKT: String? = nil

    public init(clientID: String, redirectURI: String, scope: [String], state: String?, nonce: String?, codeChallenge: String,
                prompt: Set<String>, maxAge: Int?, loginHint: String?, expectedSubject: String? = nil) {
        self.clientID = clientID
        self.redirectURI = redirectURI
        self.scope = scope
        self.state = state
        self.nonce = nonce
        self.codeChallenge = codeChallenge
        self.prompt = prompt
        self.maxAge = maxAge
        self.loginHint = loginHint
        self.expectedSubject = expectedSubject
    }
}

/// An authorization request waiting for the user to sign in. Prompt and
/// login hint are spent by then and not kept.
public struct PendingAuthorization: Equatable, Sendable {
    public let request: AuthorizationRequest
    public let formTokenHash: [UInt8]
    /// The session a `prompt=login` or `max_age` re-authentication replaces.
    public let replacesSID: String?

    public init(request: AuthorizationRequest, formTokenHash: [UInt8], replacesSID: String?) {
        self.request = request
        self.formTokenHash = formTokenHash
        self.replacesSID = replacesSID
    }
}

/// Keyed by the hash of the browser's `gh_login` cookie secret. A pending
/// request may carry a mark: the password of a user was verified for it
/// (the first of two sign-in steps).
public protocol PendingAuthorizationReads {
    func find(secretHash: [UInt8], now: Int64) throws -> PendingAuthorization?
    /// The user whose password was verified for this live request later
    /// than `markedAfter`.
    func markedUserID(secretHash: [UInt8], now: Int64, markedAfter: Int64) throws -> Int64?
}

public protocol PendingAuthorizationStore: PendingAuthorizationReads {
    /// Stores the request until `expiresAt`; expired ones are deleted on the way.
    func insert(_ pending: PendingAuthorization, secretHash: [UInt8], createdAt: Int64, expiresAt: Int64) throws
    /// Takes the live request. Of concurrent callers exactly one gets it.
    func consume(secretHash: [UInt8], now: Int64) throws -> PendingAuthorization?
    /// Marks the live request: `userID`'s password was right at `now`.
    /// False when the request is gone.
    func mark(secretHash: [UInt8], userID: Int64, now: Int64) throws -> Bool
    /// Takes the live request only if it carries a mark for `userID` made
    /// later than `markedAfter`. Of concurrent callers exactly one gets it.
    func consumeMarked(secretHash: [UInt8], userID: Int64, now: Int64, markedAfter: Int64) throws -> PendingAuthorization?
    /// Forgets every mark for `userID` (password change, disabling).
    func clearMarks(userID: Int64) throws
    /// Deletes every request marked for `userID` (password verified, code
    /// step pending) or answerable only by `subject` (an `id_token_hint`
    /// named it): erasure; returns how many. Other users' requests stay.
    func deleteAll(userID: Int64, subject: String) throws -> Int
}
