import IssuerStorage
import SSOCore

/// OpenID Connect Discovery 1.0 §3 provider metadata. It names only what
/// Gatehouse implements; each endpoint is listed by the change that adds it.
public struct DiscoveryDocument: Codable, Equatable, Sendable {
    public var issuer: String
    public var jwks_uri: String
    public var authorization_endpoint: String?
    public var token_endpoint: String?
    public var userinfo_endpoint: String?
    public var end_session_endpoint: String?
    public var revocation_endpoint: String?
    public var introspection_endpoint: String?
    /// RFC 9126 §5; `require_pushed_authorization_requests` is true only
    /// when every client must push (GATEHOUSE_REQUIRE_PAR).
    public var pushed_authorization_request_endpoint: String?
    /// RFC 8414 §2 / OIDC Discovery §3: dynamic registration (RFC 7591),
    /// with an initial access token.
    public var registration_endpoint: String?
    public var require_pushed_authorization_requests: Bool?
    public var revocation_endpoint_auth_methods_supported: [String]?
    public var introspection_endpoint_auth_methods_supported: [String]?
    public var response_types_supported: [String]
    public var response_modes_supported: [String]
    public var grant_types_supported: [String]
    public var subject_types_supported: [String]
    public var id_token_signing_alg_values_supported: [String]
    public var code_challenge_methods_supported: [String]
    public var token_endpoint_auth_methods_supported: [String]
    /// RFC 8414 §2: the JWS algorithms of `private_key_jwt` assertions.
    public var token_endpoint_auth_signing_alg_values_supported: [String]
    public var scopes_supported: [String]
    public var claims_supported: [String]
    public var acr_values_supported: [String]
    public var authorization_response_iss_parameter_supported: Bool
    public var request_parameter_supported: Bool
    public var request_uri_parameter_supported: Bool
    /// OIDC Discovery §3: the JWS algorithms of request objects (RFC 9101;
    /// never `none`: only signed objects are read).
    public var request_object_signing_alg_values_supported: [String]
    /// Native SSO §5 (draft 07): the token endpoint accepts the Native SSO
    /// token exchange and honours the `device_sso` scope.
    public var native_sso_supported: Bool?
    /// RFC 9449 §5.1: the JWS algorithms accepted in DPoP proofs.
    public var dpop_signing_alg_values_supported: [String]?
    /// OIDC Discovery §3: "Languages and scripts supported for the user
    /// interface, represented as a JSON array of BCP47 [RFC5646] language
    /// tag values": the languages there are pages in (`ui_locales` picks
    /// among them). Left out when none is known.
    public var ui_locales_supported: [String]?
    /// "Initiating User Registration via OpenID Connect 1.0" §4.2: "JSON
    /// array containing the list of prompt values that this OP supports";
    /// `create` only with GATEHOUSE_SIGNUP=open.
    public var prompt_values_supported: [String]
    /// Back-Channel Logout 1.0 §2.1: "Boolean value specifying whether the
    /// OP supports back-channel logout", and whether it sends `sid` in the
    /// logout token (always).
    public var backchannel_logout_supported: Bool
    public var backchannel_logout_session_supported: Bool

    /// `uiLocales`: the languages of the pages `ssoctl pages` wrote.
    public init(config: GatehouseConfig, uiLocales: [String] = []) {
        issuer = config.issuer
        jwks_uri = config.issuer + "/.well-known/jwks.json"
        authorization_endpoint = config.issuer + "/authorize"
        token_endpoint = config.issuer + "/token"
        userinfo_endpoint = config.issuer + "/userinfo"
        end_session_endpoint = config.issuer + "/logout"
        revocation_endpoint = config.issuer + "/revoke"
        introspection_endpoint = config.issuer + "/introspect"
        pushed_authorization_request_endpoint = config.issuer + "/par"
        registration_endpoint = config.issuer + RegistrationResponder.path
        require_pushed_authorization_requests = config.requirePushedAuthorizationRequests
        // RFC 8414 §2: each endpoint's methods, and the algorithms of
        // private_key_jwt's assertions (ClientAssertion.algorithms).
        revocation_endpoint_auth_methods_supported = ClientRules.authMethods
        introspection_endpoint_auth_methods_supported = ClientRules.authMethods.filter { $0 != "none" }
        response_types_supported = ["code"]
        response_modes_supported = ["query"]
        grant_types_supported = ["authorization_code", "refresh_token", "client_credentials", TokenExchangeRequest.grantType]
        subject_types_supported = ["public"]
        // Each client's tokens are signed with its --id-token-alg (RS256 by
        // default), whose key the JWKS publishes.
        id_token_signing_alg_values_supported = IssuerSigningKey.algorithms.map(\.rawValue)
        // RFC 9700 §2.1.1: S256 only; "plain" is refused.
        code_challenge_methods_supported = ["S256"]
        token_endpoint_auth_methods_supported = ClientRules.authMethods
        token_endpoint_auth_signing_alg_values_supported = ClientAssertion.algorithms.map(\.rawValue)
        // The standard ones; DiscoveryResponder adds every registered API's.
        scopes_supported = StandardScopes.all
        // `roles`: the user's roles, in access tokens (TokenIssuer).
        claims_supported = ["sub", "iss", "aud", "exp", "iat", "auth_time", "nonce", "sid", "email", "email_verified", "name", "amr", "acr", "ds_hash",
                            "di_hash", "roles", "idp"]
        acr_values_supported = ["urn:gatehouse:pwd", "urn:gatehouse:mfa"]
        // RFC 9207 §3: every authorization response carries `iss`.
        authorization_response_iss_parameter_supported = true
        // RFC 9101 by value at /authorize and /par; by reference only as PAR's request_uri.
        request_parameter_supported = true
        request_uri_parameter_supported = false
        request_object_signing_alg_values_supported = RequestObjects.algorithms.map(\.rawValue)
        native_sso_supported = true
        dpop_signing_alg_values_supported = DPoPProof.supportedAlgorithms
        ui_locales_supported = uiLocales.isEmpty ? nil : uiLocales.sorted()
        prompt_values_supported = AuthorizationRequestValidator.promptValues(signUpOpen: config.signup == .open)
        backchannel_logout_supported = true
        backchannel_logout_session_supported = true
    }
}

/// `GET /.well-known/openid-configuration`. The document is configuration
/// plus the registered APIs' scopes (`scopes_supported`, OIDC Discovery §3:
/// "JSON array containing a list of the OAuth 2.0 scope values that this
/// server supports"). It is encoded once and again only when the storage's
/// change marker moves; while the database is out of reach the last
/// document keeps being served (discovery must answer during an outage).
public final class DiscoveryResponder: OneEndpointGroup {
    public static let path = "/.well-known/openid-configuration"
    public let served: SingleEndpoint

    /// `apis` nil: the standard scopes only (a document without storage).
    public init(document: DiscoveryDocument, apis: APIRegistry?) throws {
        let published = try PublishedDiscoveryDocument(document: document, apis: apis)
        served = SingleEndpoint(Endpoint(Self.path, .read, cache: .asAnswered, handler: published.respond))
    }

}

/// The discovery document as served, encoded again when the registered
/// scopes change.
final class PublishedDiscoveryDocument {
    let document: DiscoveryDocument
    let apis: APIRegistry?
    private var response: Response
    private var scopes: [String]

    init(document: DiscoveryDocument, apis: APIRegistry?) throws {
        self.document = document
        self.apis = apis
        scopes = document.scopes_supported
        response = try Self.encode(document)
        refresh()
    }

    static func encode(_ document: DiscoveryDocument) throws -> Response {
        try Response.json(document, headers: [("Cache-Control", "public, max-age=300")])
    }

    /// Re-encodes when the registered scopes changed; keeps the last
    /// document when they cannot be read.
    func refresh() {
        guard let apis, let current = try? apis.supportedScopes(), current != scopes,
              let encoded = try? Self.encode(with(scopes: current)) else { return }
        (scopes, response) = (current, encoded)
    }

    func with(scopes: [String]) -> DiscoveryDocument {
        var changed = document
        changed.scopes_supported = scopes
        return changed
    }

    func respond(_ exchange: EndpointExchange) throws -> Response {
        refresh()
        return response
    }
}
