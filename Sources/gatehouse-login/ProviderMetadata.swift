/// The parts of the issuer's discovery document this tool uses (OpenID
/// Connect Discovery 1.0 §3).
struct ProviderMetadata: Decodable {
    let issuer: String
    let authorizationEndpoint: String
    let tokenEndpoint: String
    /// RFC 9126 §5: present when the issuer takes pushed requests.
    let pushedAuthorizationRequestEndpoint: String?
    let jwksURI: String
    let revocationEndpoint: String?
    let endSessionEndpoint: String?
    let codeChallengeMethodsSupported: [String]?
    let authorizationResponseIssParameterSupported: Bool?
    /// RFC 9449 §5.1: the JWS algorithms the issuer accepts in DPoP proofs.
    let dpopSigningAlgValuesSupported: [String]?

    enum CodingKeys: String, CodingKey {
        case issuer
        case authorizationEndpoint = "authorization_endpoint"
        case tokenEndpoint = "token_endpoint"
        case pushedAuthorizationRequestEndpoint = "pushed_authorization_request_endpoint"
        case jwksURI = "jwks_uri"
        case revocationEndpoint = "revocation_endpoint"
        case endSessionEndpoint = "end_session_endpoint"
        case codeChallengeMethodsSupported = "code_challenge_methods_supported"
        case authorizationResponseIssParameterSupported = "authorization_response_iss_parameter_supported"
        case dpopSigningAlgValuesSupported = "dpop_signing_alg_values_supported"
    }

    /// This tool signs its proofs with ES256 (P-256, as phones' key stores do).
    var acceptsES256Proofs: Bool { dpopSigningAlgValuesSupported?.contains("ES256") == true }

    /// Discovery §4.1: a terminating "/" is removed before appending the
    /// well-known path, so `https://host/` and `https://host` name one issuer.
    static func normalizedIssuer(_ issuer: String) -> String {
        issuer.hasSuffix("/") ? String(issuer.dropLast()) : issuer
    }

    static func fetch(issuer: String, transport: HTTPSTransport) throws -> ProviderMetadata {
        let reply = try transport.get(issuer + "/.well-known/openid-configuration")
        guard reply.status == 200 else { throw ToolError("discovery: \(issuer) answered HTTP \(reply.status)") }
        let metadata = try reply.decode(ProviderMetadata.self, what: "discovery")
        try metadata.check(issuer: issuer)
        return metadata
    }

    func check(issuer expected: String) throws {
        // Discovery §4.3: "The issuer value returned MUST be identical to the
        // Issuer URL that was used as the prefix to /.well-known/openid-configuration".
        guard issuer == expected else { throw ToolError("discovery: the document names issuer \(issuer), not \(expected)") }
        // RFC 9700 §2.1.1: PKCE with S256; an issuer that says it cannot do it is not one to sign in with.
        if let methods = codeChallengeMethodsSupported, !methods.contains("S256") {
            throw ToolError("discovery: the issuer does not support PKCE S256")
        }
        // Tokens and codes travel to these: TLS or nothing.
        let endpoints: [(String, String?)] = [("authorization_endpoint", authorizationEndpoint), ("token_endpoint", tokenEndpoint),
                                              ("pushed_authorization_request_endpoint", pushedAuthorizationRequestEndpoint),
                                              ("jwks_uri", jwksURI), ("revocation_endpoint", revocationEndpoint),
                                              ("end_session_endpoint", endSessionEndpoint)]
        for case let (name, url?) in endpoints where !url.lowercased().hasPrefix("https://") {
            throw ToolError("discovery: \(name) is not an https URL")
        }
    }
}
