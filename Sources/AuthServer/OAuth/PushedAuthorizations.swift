import IssuerStorage
import SSOCore

/// Pushed authorization requests (RFC 9126): stored at /par under a random
/// `request_uri` (kept only as its SHA-256), bound to the client that
/// pushed them, claimed once at /authorize.
public final class PushedAuthorizations {
    /// RFC 9126 §2.2: the lifetime "is at the discretion of the
    /// authorization server but will typically be relatively short (e.g.,
    /// between 5 and 600 seconds)". 90 s: an app pushes, then opens the
    /// system browser at once; 90 s covers a slow browser start on a slow
    /// mobile network, and a request_uri seen in a log or a history is
    /// worthless soon after.
    public static let lifetime = 90
    /// §2.2: "The authorization server MAY construct the request_uri value
    /// using the form urn:ietf:params:oauth:request_uri:<reference-value>".
    public static let requestURIPrefix = "urn:ietf:params:oauth:request_uri:"

    /// The most a stored request may hold, percent-encoded: what a client
    /// that does not push can send, the query of a `GET /authorize`, whose
    /// request line nginx caps at 16 KiB (`large_client_header_buffers`).
    /// A pushed request is never more than the redirect it replaces; without
    /// a bound, anyone with a public client id could make the issuer keep
    /// 170 KB a request for 90 s (and fill its disk).
    static let maximumStoredBytes = 16 * 1024

    /// What push() stores is a parsed form encoded again, every byte
    /// outside RFC 3986's unreserved set percent-escaped, at most
    /// `maximumStoredBytes`; never more parameters than the body it came
    /// from, nor longer values once decoded.
    static let storedFormLimits = FormLimits(maximumBytes: maximumStoredBytes,
                                             maximumParameters: FormLimits.standard.maximumParameters,
                                             maximumValueBytes: FormLimits.standard.maximumValueBytes)

    let storage: any IssuerStorage
    let clock: Clock

    public init(storage: any IssuerStorage, clock: @escaping Clock = systemClock) {
        self.storage = storage
        self.clock = clock
    }

    /// A pushed request as it will be stored: percent-encoded, and refused
    /// when larger than `maximumStoredBytes` (before any other check, so an
    /// oversized push costs no validation either).
    public struct Encoded {
        let text: String

        public init(_ parameters: FormParameters) throws {
            text = FormParser.encode(parameters.pairs.map { ($0.name, $0.value) })
            guard text.utf8.count <= PushedAuthorizations.maximumStoredBytes else {
                throw OAuthError.invalidRequest("the pushed request is larger than an authorization request may be",
                                                detail: "pushed request of \(text.utf8.count) bytes encoded, over \(PushedAuthorizations.maximumStoredBytes)")
            }
        }
    }

    /// Stores validated parameters for `clientID`; returns the request_uri
    /// (shown once, to the client). §2.2: the request_uri "MUST contain some
    /// part generated using a cryptographically strong pseudorandom
    /// algorithm such that it is computationally infeasible to predict or
    /// guess a valid value": 256 random bits.
    public func push(_ parameters: Encoded, clientID: String) throws -> String {
        let requestURI = Self.requestURIPrefix + SecureRandom.token(byteCount: 32)
        let now = clock()
        let encoded = parameters.text
        try storage.write {
            try $0.pushedAuthorizations.insert(requestURIHash: SecretHash.of(requestURI), clientID: clientID, parameters: encoded,
                                               createdAt: now, expiresAt: now + Int64(Self.lifetime))
        }
        return requestURI
    }

    /// RFC 9126 §4 at /authorize: when the request names a `request_uri`,
    /// the pushed parameters, and only they, are the request (nil when it
    /// names none). Nothing of the request is trusted until the claim
    /// succeeds, so every failure is an error page, never a redirect; its
    /// log detail says which failure it was.
    public func parameters(for request: FormParameters, validator: AuthorizationRequestValidator) throws -> FormParameters? {
        guard !request.values("request_uri").isEmpty else { return nil }
        let requestURI = try validator.trustedParameter(request, "request_uri")
        // §4 (with RFC 9101 §5): client_id is REQUIRED beside request_uri,
        // and must be the client the request_uri is bound to (§2.2).
        let clientID = try validator.trustedParameter(request, "client_id")
        let claim = try storage.write {
            try $0.pushedAuthorizations.claim(requestURIHash: SecretHash.of(requestURI), clientID: clientID, now: clock())
        }
        switch claim {
        case .claimed(let parameters):
            do { return try FormParser.parse(Array(parameters.utf8), limits: Self.storedFormLimits) } catch let error as FormError {
                // Stored by push() from a parsed form: cannot happen short of a damaged row.
                throw AuthorizationFailure.errorPage(message: PageText("error.request_unreadable"),
                                                     description: "the pushed request could not be read",
                                                     detail: "stored pushed request unreadable: \(error)", parameter: "request_uri")
            }
        case .refused(let reason):
            // §4: "An expired request_uri MUST be rejected as invalid"; so is
            // an unknown, a used (single use) and another client's one.
            throw AuthorizationFailure.errorPage(message: PageText("error.request_expired"),
                                                 description: "request_uri is expired, used or unknown",
                                                 detail: "request_uri refused: \(reason.rawValue)", parameter: "request_uri")
        }
    }
}
