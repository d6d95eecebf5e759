import IssuerStorage
import SSOCore

// The JSON forms of users, clients, APIs, sessions and signing keys: what
// `ssoctl … list --json` prints and what the admin API answers, one type
// each so the two never drift. Keys in snake_case, times in seconds since
// the epoch (null when absent; every key is always present). Never a
// secret or a hash.

/// `ssoctl user list --json`.
public struct UserJSON: Encodable {
    let email: String
    let name: String
    let roles: [String]
    let disabled: Bool
    let sub: String
    let email_verified: Bool
    /// True for an invited account until its invitation sets a password
    /// (no password signs in to it meanwhile).
    let invitation_pending: Bool
    /// The admin API's name for the account (its `sub`); absent from
    /// `ssoctl user list --json`, whose shape predates it.
    let id: String?

    public init(_ user: User, withID: Bool = false) {
        id = withID ? user.subject : nil
        email = user.email
        name = user.name
        roles = user.roles
        disabled = user.disabled
        sub = user.subject
        email_verified = user.emailVerified
        invitation_pending = !user.hasPassword
    }
}

/// `ssoctl keys list --json`: the key's state now, and its times.
public struct SigningKeyJSON: Encodable {
    let kid: String
    let state: String
    let createdAt: Int64
    let activatesAt: Int64
    let retiredAt: Int64?
    let algorithm: String

    public init(_ key: SigningKeyRecord) {
        kid = key.kid
        algorithm = key.algorithm.rawValue
        state = key.state.rawValue
        createdAt = key.createdAt
        activatesAt = key.activatesAt
        retiredAt = key.retiredAt
    }

    enum CodingKeys: String, CodingKey {
        case kid, state
        case createdAt = "created_at", activatesAt = "activates_at", retiredAt = "retired_at", algorithm = "alg"
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(kid, forKey: .kid)
        try container.encode(algorithm, forKey: .algorithm)
        try container.encode(state, forKey: .state)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(activatesAt, forKey: .activatesAt)
        try container.encode(retiredAt, forKey: .retiredAt)   // null while not retired
    }
}

/// `ssoctl sessions list --json`: the public sid (tokens carry it), never
/// the cookie secret or its hash.
public struct SessionJSON: Encodable {
    let sid: String
    let email: String
    let state: String
    let amr: [String]
    let authTime: Int64
    let createdAt: Int64
    let expiresAt: Int64
    let endedAt: Int64?

    /// The admin API's `user` (the account's `sub`); absent from
    /// `ssoctl sessions list --json`.
    let user: String?

    public init(_ session: SSOSessionListing, user: String? = nil) {
        self.user = user
        sid = session.sid
        email = session.email
        state = session.state.rawValue
        amr = session.amr
        authTime = session.authTime
        createdAt = session.createdAt
        expiresAt = session.expiresAt
        endedAt = session.endedAt
    }

    enum CodingKeys: String, CodingKey {
        case sid, email, state, amr, user
        case authTime = "auth_time", createdAt = "created_at", expiresAt = "expires_at", endedAt = "ended_at"
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(sid, forKey: .sid)
        try container.encodeIfPresent(user, forKey: .user)
        try container.encode(email, forKey: .email)
        try container.encode(state, forKey: .state)
        try container.encode(amr, forKey: .amr)
        try container.encode(authTime, forKey: .authTime)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(expiresAt, forKey: .expiresAt)
        try container.encode(endedAt, forKey: .endedAt)   // null while not ended
    }
}

/// `ssoctl client list --json`: never the secret or its hash, only the
/// client's type.
public struct ClientJSON: Encodable {
    let client: Client

    public init(_ client: Client) { self.client = client }

    enum CodingKeys: String, CodingKey {
        case clientID = "client_id", name, type, grantTypes = "grant_types", scopes, redirectURIs = "redirect_uris"
        case postLogoutRedirectURIs = "post_logout_redirect_uris", nativeSSOGroup = "native_sso_group", requireDPoP = "require_dpop"
        case requirePAR = "require_par", accessTokenTTL = "access_token_ttl", refreshTokenTTL = "refresh_token_ttl"
        case iosAppID = "ios_app_id", androidPackage = "android_package", androidCertificateFingerprints = "android_cert_fingerprints"
        case backchannelLogoutURI = "backchannel_logout_uri"
        case authMethod = "token_endpoint_auth_method", jwksURI = "jwks_uri", jwksKeyIDs = "jwks_kids"
        case requireSignedRequestObject = "require_signed_request_object"
        case idTokenAlgorithm = "id_token_signed_response_alg", profile
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(client.clientID, forKey: .clientID)
        try container.encode(client.displayName, forKey: .name)   // null: the pages show the client_id
        try container.encode(client.isConfidential ? "confidential" : "public", forKey: .type)
        try container.encode(client.grantTypes, forKey: .grantTypes)
        try container.encode(client.scopes, forKey: .scopes)
        try container.encode(client.redirectURIs, forKey: .redirectURIs)
        try container.encode(client.postLogoutRedirectURIs, forKey: .postLogoutRedirectURIs)
        try container.encode(client.nativeSSOGroup, forKey: .nativeSSOGroup)   // null when in no group
        try container.encode(client.requireDPoP, forKey: .requireDPoP)
        try container.encode(client.requirePAR, forKey: .requirePAR)
        try container.encode(client.accessTokenLifetime, forKey: .accessTokenTTL)   // null: the issuer's
        try container.encode(client.refreshTokenLifetime, forKey: .refreshTokenTTL)
        try container.encode(client.iosAppID, forKey: .iosAppID)
        try container.encode(client.androidPackage, forKey: .androidPackage)
        try container.encode(client.androidCertificateFingerprints, forKey: .androidCertificateFingerprints)
        try container.encode(client.backchannelLogoutURI, forKey: .backchannelLogoutURI)   // null: told of no logout
        try container.encode(client.authenticationMethod, forKey: .authMethod)
        try container.encode(client.jwksURI, forKey: .jwksURI)   // null: none, or keys registered from a file
        try container.encode(client.registeredKeyIDs, forKey: .jwksKeyIDs)   // the kids of --jwks-file's keys, sorted
        try container.encode(client.requireSignedRequestObject, forKey: .requireSignedRequestObject)
        try container.encode(client.idTokenAlgorithm ?? "RS256", forKey: .idTokenAlgorithm)
        try container.encode(client.profile, forKey: .profile)   // null: none; "fapi2"
    }
}

/// `ssoctl api list --json`.
public struct APIJSON: Encodable {
    let audience: String
    let name: String
    let scopes: [String]

    public init(_ api: RegisteredAPI) {
        audience = api.audience
        name = api.name
        scopes = api.scopes
    }
}
