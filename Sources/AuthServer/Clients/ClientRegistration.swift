import IssuerStorage

/// Everything `ssoctl client add` can say about a new client.
public struct ClientRegistration: Sendable {
    public var clientID: String
    /// What the pages call the client (`--name`); nil: its id.
    public var displayName: String?
    public var redirectURIs: [String]
    public var postLogoutRedirectURIs: [String]
    /// Empty: `openid` for a sign-in client; a machine client must name its API scopes.
    public var scopes: [String]
    public var nativeSSOGroup: String?
    /// A confidential client's secret (client_secret_basic); nil: public.
    public var secret: String?
    /// Empty: authorization_code and refresh_token.
    public var grantTypes: [String]
    public var requireDPoP: Bool
    public var requirePAR: Bool
    public var accessTokenLifetime: Int?
    public var refreshTokenLifetime: Int?
    public var iosAppID: String?
    public var androidPackage: String?
    public var androidCertificateFingerprints: [String]
    /// Back-Channel Logout 1.0 §2.2: where logout tokens go; nil: none.
    public var backchannelLogoutURI: String?
    /// RFC 7591 §2 `token_endpoint_auth_method`; nil: by the secret.
    public var authMethod: String?
    /// `private_key_jwt`: the client's public keys (a JWK Set as JSON), or
    /// where to fetch them.
    public var jwks: String?
    public var jwksURI: String?
    /// RFC 9101 §10.5: authorization requests only as signed request objects.
    public var requireSignedRequestObject: Bool
    /// The algorithm of the client's tokens (`RS256`, `ES256`, `EdDSA`); nil: RS256.
    public var idTokenAlgorithm: String?
    /// `fapi2`: held to the FAPI 2.0 Security Profile; nil: no profile.
    public var profile: String?
    /// RFC 7592: the SHA-256 of the registration access token (dynamic
    /// registration only).
    public var registrationAccessTokenHash: [UInt8]?
    /// A stored secret's hash kept as it is (RFC 7592 §2.2: an update keeps
    /// the secret); used only when `secret` is nil.
    var keptSecretHash: String?

    public init(clientID: String, redirectURIs: [String] = [], postLogoutRedirectURIs: [String] = [], scopes: [String] = [],
                nativeSSOGroup: String? = nil, secret: String? = nil, grantTypes: [String] = [], requireDPoP: Bool = false,
                requirePAR: Bool = false, accessTokenLifetime: Int? = nil, refreshTokenLifetime: Int? = nil, iosAppID: String? = nil,
                androidPackage: String? = nil, androidCertificateFingerprints: [String] = [], displayName: String? = nil,
                backchannelLogoutURI: String? = nil, authMethod: String? = nil, jwks: String? = nil, jwksURI: String? = nil,
                requireSignedRequestObject: Bool = false, idTokenAlgorithm: String? = nil, profile: String? = nil) {
        self.clientID = clientID
        self.profile = profile
        self.idTokenAlgorithm = idTokenAlgorithm
        self.requireSignedRequestObject = requireSignedRequestObject
        self.authMethod = authMethod
        self.jwks = jwks
        self.jwksURI = jwksURI
        self.backchannelLogoutURI = backchannelLogoutURI
        self.displayName = displayName
        self.redirectURIs = redirectURIs
        self.postLogoutRedirectURIs = postLogoutRedirectURIs
        self.scopes = scopes
        self.nativeSSOGroup = nativeSSOGroup
        self.secret = secret
        self.grantTypes = grantTypes
        self.requireDPoP = requireDPoP
        self.requirePAR = requirePAR
        self.accessTokenLifetime = accessTokenLifetime
        self.refreshTokenLifetime = refreshTokenLifetime
        self.iosAppID = iosAppID
        self.androidPackage = androidPackage
        self.androidCertificateFingerprints = androidCertificateFingerprints
    }
}

/// What `ssoctl client update` changes; nil or empty leaves a setting as it is.
public struct ClientChanges: Sendable {
    public var addRedirectURIs: [String] = []
    public var removeRedirectURIs: [String] = []
    public var addPostLogoutRedirectURIs: [String] = []
    public var removePostLogoutRedirectURIs: [String] = []
    public var addScopes: [String] = []
    public var removeScopes: [String] = []
    public var addGrantTypes: [String] = []
    public var removeGrantTypes: [String] = []
    /// Whole lists replacing the stored ones (the admin API's PATCH),
    /// applied before the additions and removals above.
    public var redirectURIs: [String]?
    public var postLogoutRedirectURIs: [String]?
    public var scopes: [String]?
    public var grantTypes: [String]?
    public var requireDPoP: Bool?
    public var requirePAR: Bool?
    /// 0 returns to the issuer's lifetime.
    public var accessTokenLifetime: Int?
    public var refreshTokenLifetime: Int?
    /// "" removes it.
    public var iosAppID: String?
    public var androidPackage: String?
    /// Replaces the list when not nil.
    public var androidCertificateFingerprints: [String]?
    /// The name the pages show; "" removes it (they show the id again).
    public var displayName: String?
    /// The back-channel logout URI; "" removes it (`--no-backchannel-logout`).
    public var backchannelLogoutURI: String?
    /// The authentication method; "" returns to the secret's default.
    public var authMethod: String?
    /// New keys: a JWK Set, or a URL; setting one removes the other.
    public var jwks: String?
    public var jwksURI: String?
    public var requireSignedRequestObject: Bool?
    /// The algorithm of the client's tokens; "RS256" returns to the default.
    public var idTokenAlgorithm: String?
    /// The profile; "none" removes it.
    public var profile: String?

    public init() {}

    public var isEmpty: Bool {
        addRedirectURIs.isEmpty && removeRedirectURIs.isEmpty && addPostLogoutRedirectURIs.isEmpty && removePostLogoutRedirectURIs.isEmpty
            && addScopes.isEmpty && removeScopes.isEmpty && addGrantTypes.isEmpty && removeGrantTypes.isEmpty && requireDPoP == nil
            && requirePAR == nil && accessTokenLifetime == nil && refreshTokenLifetime == nil && iosAppID == nil && androidPackage == nil
            && androidCertificateFingerprints == nil && displayName == nil && backchannelLogoutURI == nil
            && authMethod == nil && jwks == nil && jwksURI == nil && requireSignedRequestObject == nil
            && idTokenAlgorithm == nil && profile == nil && redirectURIs == nil && postLogoutRedirectURIs == nil && scopes == nil
            && grantTypes == nil
    }

    /// True when the name is all that changes.
    public var changesOnlyTheName: Bool {
        var rest = self
        rest.displayName = nil
        return displayName != nil && rest.isEmpty
    }
}
