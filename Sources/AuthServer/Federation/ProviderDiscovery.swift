import FoundationEssentials
import IssuerStorage
import SSOCore

/// The issuer's requests to a provider over HTTPS (its discovery document,
/// its JWKS, its token endpoint): the outbound client's rules (https only,
/// the trust store, no redirects, 10 s, 1 MiB) live behind it, in
/// IssuerComposition, so this target needs no libcurl.
public protocol ProviderDocumentFetching {
    func get(_ url: String) throws -> (status: Int, body: [UInt8])
    /// An `application/x-www-form-urlencoded` POST (the token request).
    func postForm(_ url: String, _ fields: [(String, String)], headers: [(name: String, value: String)]) throws -> (status: Int, body: [UInt8])
}

/// A process with no outbound client (ssoctl's read-only commands, most tests).
public struct NoProviderHTTP: ProviderDocumentFetching {
    public init() {}
    public func get(_ url: String) throws -> (status: Int, body: [UInt8]) { throw ValidationError("no outbound HTTPS in this process") }
    public func postForm(_ url: String, _ fields: [(String, String)], headers: [(name: String, value: String)]) throws -> (status: Int, body: [UInt8]) {
        throw ValidationError("no outbound HTTPS in this process")
    }
}

/// Reads a provider's OpenID Connect discovery document (OpenID Connect
/// Discovery 1.0 §4) and keeps what the issuer needs of it.
struct ProviderDiscovery {
    let fetcher: any ProviderDocumentFetching

    /// The members the issuer reads; others are ignored.
    struct Document: Decodable {
        let issuer: String?
        let authorization_endpoint: String?
        let token_endpoint: String?
        let jwks_uri: String?
        let response_types_supported: [String]?
        let id_token_signing_alg_values_supported: [String]?
        let authorization_response_iss_parameter_supported: Bool?
    }

    /// §4: "the Issuer ... MUST be a URL using the https scheme with no
    /// query or fragment component" and the document is at the issuer with
    /// `/.well-known/openid-configuration` appended ("any terminating / MUST
    /// be removed" first).
    static func documentURL(issuer: String) throws -> String {
        guard let components = URLComponents(string: issuer), components.scheme == "https", let host = components.host, !host.isEmpty,
              components.query == nil, components.fragment == nil, components.user == nil, components.password == nil,
              issuer.utf8.allSatisfy({ $0 > 32 && $0 < 127 }) else {
            throw ValidationError("the issuer must be an https URL with a host and no query, fragment or user: \(issuer.debugDescription)")
        }
        return (issuer.hasSuffix("/") ? String(issuer.dropLast()) : issuer) + "/.well-known/openid-configuration"
    }

    func endpoints(issuer: String) throws -> ProviderEndpoints {
        let url = try Self.documentURL(issuer: issuer)
        let (status, body) = try fetcher.get(url)
        guard status == 200 else { throw ValidationError("\(url) answered \(status), not 200 with a discovery document") }
        guard let document = try? JSONDecoder().decode(Document.self, from: Data(body)) else {
            throw ValidationError("\(url) is not an OpenID Connect discovery document (JSON object)")
        }
        // §4.3: "The issuer value returned MUST be identical to the Issuer
        // URL that was used as the prefix to /.well-known/openid-configuration
        // to retrieve the configuration information."
        guard let stated = document.issuer, stated.utf8.elementsEqual(issuer.utf8) else {
            throw ValidationError("the discovery document names the issuer \((document.issuer ?? "nothing").debugDescription), "
                                  + "not \(issuer.debugDescription): give the provider's issuer exactly")
        }
        guard document.response_types_supported?.contains("code") ?? false else {
            throw ValidationError("the provider does not list the code flow (response_types_supported lacks \"code\")")
        }
        let endpoints = ProviderEndpoints(authorization: try Self.httpsEndpoint(document.authorization_endpoint, "authorization_endpoint"),
                                          token: try Self.httpsEndpoint(document.token_endpoint, "token_endpoint"),
                                          jwks: try Self.httpsEndpoint(document.jwks_uri, "jwks_uri"),
                                          sendsIssuer: document.authorization_response_iss_parameter_supported ?? false)
        // Its ID tokens are checked through the issuer's JWS pipeline, which
        // verifies RS256 and ES256 (OIDC Core §15.1: RS256 is the default).
        if let algorithms = document.id_token_signing_alg_values_supported, !algorithms.contains(where: { ["RS256", "ES256"].contains($0) }) {
            throw ValidationError("the provider signs ID tokens with \(algorithms.joined(separator: ", ")) only; Gatehouse verifies RS256 and ES256")
        }
        return endpoints
    }

    static func httpsEndpoint(_ value: String?, _ member: String) throws -> String {
        guard let value, let components = URLComponents(string: value), components.scheme == "https", let host = components.host,
              !host.isEmpty, components.fragment == nil, value.utf8.allSatisfy({ $0 > 32 && $0 < 127 }) else {
            throw ValidationError("the discovery document's \(member) is missing or not an https URL")
        }
        return value
    }
}
