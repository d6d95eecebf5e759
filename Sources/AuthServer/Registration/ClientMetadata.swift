import FoundationEssentials
import IssuerStorage
import SSOCore

/// A client's metadata as dynamic registration carries it (RFC 7591 §2,
/// OpenID Connect Dynamic Client Registration 1.0 §2, and the members
/// later specifications added), read from a registration request and
/// written back in every answer. RFC 7591 §2: "The authorization server
/// MUST ignore any client metadata sent by the client that it does not
/// understand"; a member it does understand with the wrong type is
/// `invalid_client_metadata`, never ignored.
struct ClientMetadata: Codable, Equatable {
    var redirect_uris: [String]?
    var post_logout_redirect_uris: [String]?
    var token_endpoint_auth_method: String?
    var grant_types: [String]?
    var response_types: [String]?
    var client_name: String?
    var scope: String?
    var jwks: JWKSetDocument?
    var jwks_uri: String?
    /// OIDC Registration §2: `native` or `web` (the default).
    var application_type: String?
    var id_token_signed_response_alg: String?
    var backchannel_logout_uri: String?
    /// Back-Channel Logout §2.2: Gatehouse always sends `sid`.
    var backchannel_logout_session_required: Bool?
    /// RFC 9126 §6.
    var require_pushed_authorization_requests: Bool?
    /// RFC 9449 §5.2.
    var dpop_bound_access_tokens: Bool?
    /// RFC 9101 §10.5.
    var require_signed_request_object: Bool?
    /// RFC 7591 §2.3: refused, not ignored (nothing here could trust it).
    var software_statement: String?

    /// A JWK Set kept as the JSON it was sent as (checked like `--jwks-file`).
    struct JWKSetDocument: Codable, Equatable {
        let text: String

        init(text: String) { self.text = text }

        init(from decoder: Decoder) throws {
            let container = try decoder.singleValueContainer()
            let value = try container.decode(JSONValue.self)
            guard case .object = value else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "jwks is not a JSON object")
            }
            text = String(decoding: try JSONEncoder().encode(value), as: UTF8.self)
        }

        func encode(to encoder: Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)))
        }
    }

    /// The metadata of a stored client, as answers show it.
    init(_ client: Client) {
        redirect_uris = client.redirectURIs
        post_logout_redirect_uris = client.postLogoutRedirectURIs.isEmpty ? nil : client.postLogoutRedirectURIs
        token_endpoint_auth_method = client.authenticationMethod
        grant_types = client.grantTypes
        response_types = client.allows(grantType: "authorization_code") ? ["code"] : []
        client_name = client.displayName
        scope = client.scopes.joined(separator: " ")
        jwks = client.jwks.map(JWKSetDocument.init(text:))
        jwks_uri = client.jwksURI
        id_token_signed_response_alg = client.idTokenAlgorithm ?? "RS256"
        backchannel_logout_uri = client.backchannelLogoutURI
        backchannel_logout_session_required = client.backchannelLogoutURI == nil ? nil : true
        require_pushed_authorization_requests = client.requirePAR
        dpop_bound_access_tokens = client.requireDPoP
        require_signed_request_object = client.requireSignedRequestObject
    }
}

/// Any JSON value, to carry a JWK Set through as it was sent.
indirect enum JSONValue: Codable, Equatable {
    case string(String), number(Double), bool(Bool), null, array([JSONValue]), object([String: JSONValue])

    init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() { self = .null }
        else if let value = try? container.decode(Bool.self) { self = .bool(value) }
        else if let value = try? container.decode(String.self) { self = .string(value) }
        else if let value = try? container.decode(Double.self) { self = .number(value) }
        else if let value = try? container.decode([JSONValue].self) { self = .array(value) }
        else { self = .object(try container.decode([String: JSONValue].self)) }
    }

    func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .bool(let value): try container.encode(value)
        case .null: try container.encodeNil()
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}
