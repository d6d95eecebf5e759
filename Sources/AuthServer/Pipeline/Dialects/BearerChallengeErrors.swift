import SSOCore

/// RFC 6750 §3: a refused request for a protected resource of the issuer
/// (userinfo) gets `WWW-Authenticate` with the error, in the realm of the
/// issuer's origin.
public struct BearerChallengeErrors: ErrorDialect {
    let realm: String

    public init(realm: String) { self.realm = realm }

    public func response(for error: any Error, _ exchange: EndpointExchange) throws -> Response? {
        guard var bearerError = error as? IssuerBearerError else { return nil }
        bearerError.realm = realm
        return bearerError.response.logging(bearerError.logDetail)
    }
}
