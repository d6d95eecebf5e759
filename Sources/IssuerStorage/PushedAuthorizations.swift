/// A pushed authorization request (RFC 9126 §2) as stored, by the SHA-256
/// of its `request_uri` (never the URI itself): the client it is bound to
/// (§2.2: "The request_uri value MUST be bound to the client that posted
/// the authorization request") and its parameters as pushed, form-encoded.
public struct PushedAuthorization: Equatable, Sendable {
    public let clientID: String
    /// application/x-www-form-urlencoded, as validated at push time.
    public let parameters: String
    public let createdAt: Int64
    public let expiresAt: Int64
    /// When /authorize claimed it; nil while unused.
    public let usedAt: Int64?

    public init(clientID: String, parameters: String, createdAt: Int64, expiresAt: Int64, usedAt: Int64?) {
        self.clientID = clientID
        self.parameters = parameters
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.usedAt = usedAt
    }
}

/// Why a claim got nothing: read after the claim's UPDATE matched no row,
/// changing nothing. For the log, never for the wire (§4: the browser is
/// shown one error page whatever the reason).
public enum PushedAuthorizationRefusal: String, Equatable, Sendable {
    /// No request hashes to the one presented (never pushed, or swept).
    case unknown
    /// Pushed by another client than the one presenting it.
    case otherClient = "other client"
    /// Claimed before (single use).
    case used
    /// Past its `expires_at`.
    case expired
}

public enum PushedAuthorizationClaim: Equatable, Sendable {
    /// The parameters as pushed; the request is spent from now on.
    case claimed(parameters: String)
    case refused(PushedAuthorizationRefusal)
}

public protocol PushedAuthorizationReads {
    /// The request as it stands, used or not, expired or not.
    func find(requestURIHash: [UInt8]) throws -> PushedAuthorization?
}

public protocol PushedAuthorizationStore: PushedAuthorizationReads {
    /// Stores a validated request until `expiresAt`; the sweep deletes it
    /// once expired or used.
    func insert(requestURIHash: [UInt8], clientID: String, parameters: String, createdAt: Int64, expiresAt: Int64) throws
    /// Marks the request used at `now` and returns its parameters, if it is
    /// unused, unexpired and pushed by `clientID` (compared as bytes): one
    /// conditional `UPDATE … WHERE used_at IS NULL AND expires_at > now AND
    /// client_id = … RETURNING parameters`. Of concurrent callers exactly
    /// one gets the parameters; the others, and every mismatch, get
    /// `.refused` with the reason, read without changing anything (in that
    /// order: unknown, other client, used, expired).
    func claim(requestURIHash: [UInt8], clientID: String, now: Int64) throws -> PushedAuthorizationClaim
}

extension PushedAuthorization {
    /// Why `clientID` could not claim this request at `now`, in the order
    /// the stores' `claim` reports it.
    public func refusal(clientID: String, now: Int64) -> PushedAuthorizationRefusal {
        if !Array(self.clientID.utf8).elementsEqual(clientID.utf8) { return .otherClient }
        if usedAt != nil { return .used }
        return .expired
    }
}
