import IssuerStorage
import SSOCore

/// A token exchange request (RFC 8693 §2.1) in the Native SSO profile
/// (Native SSO §4.1–4.2), parsed and checked for shape only: every check
/// here is about the request's parameters and answers invalid_request or
/// invalid_target; the tokens themselves are judged by NativeSSOChecks.
public struct TokenExchangeRequest: Equatable, Sendable {
    public static let grantType = "urn:ietf:params:oauth:grant-type:token-exchange"
    public static let idTokenType = "urn:ietf:params:oauth:token-type:id_token"
    public static let accessTokenType = "urn:ietf:params:oauth:token-type:access_token"
    /// Native SSO draft 07 §4.1.
    public static let deviceSecretType = "urn:openid:params:token-type:device-secret"
    /// The seed profile's device id (Native SSO draft 00–03).
    public static let deviceIDType = "urn:x-oath:params:oauth:token-type:device-id"

    /// Who app #2 says it is on this device: the device id (seed profile) or
    /// the device secret app #1 got (current draft).
    public enum Actor: Equatable, Sendable {
        case deviceID(String)
        case deviceSecret(String)
    }

    public let subjectToken: String
    public let actor: Actor
    /// The `scope` parameter, nil when absent.
    public let scope: [String]?

    public static func parse(_ form: FormParameters, issuer: String) throws -> TokenExchangeRequest {
        try checkNoResource(form)
        try checkAudience(form, issuer: issuer)
        try checkRequestedTokenType(form)
        let subjectToken = try checkSubjectToken(form)
        let actor = try checkActorToken(form)
        return TokenExchangeRequest(subjectToken: subjectToken, actor: actor, scope: try scope(form))
    }

    // Native SSO §4.1: "audience: REQUIRED ... the value MUST be the issuer
    // URI for the OpenID Provider." RFC 8693 §2.2.2: "If the authorization
    // server is unwilling or unable to issue a token for any target service
    // indicated by the resource or audience parameters, the invalid_target
    // error code SHOULD be used". Missing: invalid_request; another: invalid_target.
    static func checkAudience(_ form: FormParameters, issuer: String) throws {
        guard let audience = try form.single("audience") else { throw OAuthError.invalidRequest("audience is required (the issuer)") }
        guard audience.bytesEqual(issuer) else { throw OAuthError(.invalidTarget, "audience must be the issuer") }
    }

    // RFC 8693 §2.1 resource: tokens here are for the issuer's own APIs,
    // chosen by scope; a resource indicator names a target it cannot honour.
    static func checkNoResource(_ form: FormParameters) throws {
        if try form.single("resource") != nil { throw OAuthError(.invalidTarget, "resource is not supported; use scope") }
    }

    // RFC 8693 §2.1: "requested_token_type OPTIONAL. An identifier ... for
    // the type of the requested security token." Only access tokens are issued.
    static func checkRequestedTokenType(_ form: FormParameters) throws {
        if let requested = try form.single("requested_token_type"), requested != accessTokenType {
            throw OAuthError.invalidRequest("requested_token_type must be \(accessTokenType)")
        }
    }

    // Native SSO §4.1: "subject_token REQUIRED. This parameter MUST contain
    // the id_token obtained by the first native app." and "subject_token_type
    // REQUIRED. This parameter MUST contain the value:
    // urn:ietf:params:oauth:token-type:id_token".
    static func checkSubjectToken(_ form: FormParameters) throws -> String {
        guard let token = try form.single("subject_token") else { throw OAuthError.invalidRequest("subject_token is required") }
        guard let type = try form.single("subject_token_type") else { throw OAuthError.invalidRequest("subject_token_type is required") }
        guard type == idTokenType else { throw OAuthError.invalidRequest("subject_token_type must be \(idTokenType)") }
        return token
    }

    // Native SSO §4.1: "actor_token REQUIRED. This value defines the actor
    // making the request which in this case is the device_secret" with
    // "actor_token_type REQUIRED. This value MUST be:
    // urn:openid:params:token-type:device-secret"; the seed profile sends the
    // device_id with urn:x-oath:params:oauth:token-type:device-id. RFC 8693
    // §2.1: actor_token_type "is REQUIRED when the actor_token parameter is
    // present in the request but MUST NOT be included otherwise."
    static func checkActorToken(_ form: FormParameters) throws -> Actor {
        let token = try form.single("actor_token")
        let type = try form.single("actor_token_type")
        guard let token else {
            throw OAuthError.invalidRequest(type == nil ? "actor_token is required (the device secret or device id)"
                                                        : "actor_token_type must not be sent without actor_token")
        }
        switch type {
        case nil: throw OAuthError.invalidRequest("actor_token_type is required")
        case deviceSecretType: return .deviceSecret(token)
        case deviceIDType: return .deviceID(token)
        default: throw OAuthError.invalidRequest("actor_token_type must be \(deviceSecretType) or \(deviceIDType)")
        }
    }

    // RFC 6749 §3.3: scope = scope-token *( SP scope-token ), parsed as at
    // every other endpoint: ASCII scope tokens only, duplicates dropped.
    static func scope(_ form: FormParameters) throws -> [String]? {
        try form.single("scope").map(ScopeParameter.parse)
    }
}
