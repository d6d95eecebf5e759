/// What a resource server accepts: tokens from one issuer, for its own
/// origin, granting its scope, with a little clock leeway.
public struct AccessTokenPolicy: Sendable {
    /// Must equal the token's `iss` exactly.
    public let issuer: String
    /// This resource server's origin: the `aud` value it answers to and the
    /// `realm` of its challenges.
    public let audience: String
    public let requiredScope: String
    /// Seconds of clock difference tolerated on `exp`, `nbf` and `iat`.
    public let leeway: Int

    public init(issuer: String, audience: String, requiredScope: String, leeway: Int = 60) {
        self.issuer = issuer
        self.audience = audience
        self.requiredScope = requiredScope
        self.leeway = leeway
    }

    /// A `BearerError` carrying this resource's realm and scope.
    func error(_ code: BearerError.Code, _ description: String, detail: String = "",
               scheme: BearerError.Scheme = .bearer) -> BearerError {
        BearerError(code, description, detail: detail, realm: audience, requiredScope: requiredScope, scheme: scheme)
    }
}
