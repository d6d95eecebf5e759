import SSOCore

/// The access token of an `Authorization: Bearer` header (RFC 6750 §2.1):
/// `AccessTokenCredentials` with every other scheme, DPoP included, absent.
public enum BearerCredentials {
    public enum Outcome: Equatable, Sendable {
        /// No Authorization header, an empty one, or another scheme.
        case absent
        /// The Bearer scheme with no token or a token of forbidden characters.
        case malformed(String)
        case token(String)
    }

    public static func extract(fromAuthorization header: String?) -> Outcome {
        switch AccessTokenCredentials.extract(fromAuthorization: header) {
        case .absent, .malformed(.dpop, _), .token(.dpop, _): .absent
        case .malformed(.bearer, let reason): .malformed(reason)
        case .token(.bearer, let token): .token(token)
        }
    }
}
