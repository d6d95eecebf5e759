/// A registered client.
public struct Client: Equatable, Sendable {
    public let clientID: String
    /// What people see the client called (`ssoctl client add --name`): the
    /// login page, the sign-out confirmation and the account page show it
    /// instead of the id. nil: they show the id.
    public var displayName: String?
    /// This registration of the client id, random (ClientRegistry.add):
    /// access tokens carry it (`client_registration`), so a client deleted
    /// and registered again under the same id is another client to them.
    /// Kept by every update; only a new registration has another.
    public var registrationID: String
    /// scrypt of the client secret; nil for a public client.
    public var secretHash: String?
    public var scopes: [String]
    public var nativeSSOGroup: String?
    public var redirectURIs: [String]
    public var postLogoutRedirectURIs: [String]
    /// The grant types it may use (RFC 7591 §2 `grant_types`):
    /// `authorization_code`, `refresh_token`, `client_credentials`.
    public var grantTypes: [String]
    /// Every token request must carry a DPoP proof (RFC 9449).
    public var requireDPoP: Bool
    /// Every authorization request must be pushed first (RFC 9126 §6).
    public var requirePAR: Bool
    /// Seconds, below the issuer's own maximum; nil: the issuer's.
    public var accessTokenLifetime: Int?
    public var refreshTokenLifetime: Int?
    /// The app behind the client, for the app-link association files:
    /// `TEAMID.bundle.id`, and the Android package with the SHA-256
    /// fingerprints of its signing certificates.
    public var iosAppID: String?
    public var androidPackage: String?
    public var androidCertificateFingerprints: [String]
    /// OpenID Connect Back-Channel Logout 1.0 §2.2 `backchannel_logout_uri`:
    /// where the issuer POSTs a logout token when a session in which this
    /// client was issued tokens ends; nil: it is told nothing.
    public var backchannelLogoutURI: String?
    /// RFC 7591 §2 `token_endpoint_auth_method`: `client_secret_basic`,
    /// `client_secret_post`, `private_key_jwt` or `none`; nil: a client with
    /// a secret may use either secret method, one without is public.
    public var authMethod: String?
    /// The client's public keys for `private_key_jwt` (RFC 7591 §2 `jwks`):
    /// a JWK Set as JSON, checked when registered; or `jwksURI`, where the
    /// issuer fetches it (never both).
    public var jwks: String?
    public var jwksURI: String?
    /// RFC 9101 §10.5 `require_signed_request_object`: every authorization
    /// request of this client comes as a request object signed with its key.
    public var requireSignedRequestObject: Bool
    /// A security profile the client is held to (`fapi2`: the FAPI 2.0
    /// Security Profile), nil for none.
    public var profile: String?
    /// OpenID Connect Dynamic Client Registration §2
    /// `id_token_signed_response_alg`: the algorithm of the client's ID
    /// tokens and access tokens (`RS256`, `ES256`, `EdDSA`); nil: RS256.
    public var idTokenAlgorithm: String?
    /// RFC 7592 §3: the SHA-256 of the registration access token a client
    /// registered through `POST /register` reads and changes its
    /// registration with; nil for clients `ssoctl` registered.
    public var registrationAccessTokenHash: [UInt8]?

    public var isConfidential: Bool { secretHash != nil || authMethod == "private_key_jwt" }

    /// Held to the FAPI 2.0 Security Profile (`--profile fapi2`).
    public var isFAPI2: Bool { profile == "fapi2" }
    /// Authorization requests only through PAR: `--require-par`, or FAPI 2.0
    /// (Security Profile §5.3.2.2: "shall require PAR").
    public var mustPushRequests: Bool { requirePAR || isFAPI2 }
    /// Tokens only with a DPoP proof: `--require-dpop`, or FAPI 2.0
    /// (§5.3.2.1: "shall only issue sender-constrained access tokens").
    public var mustUseDPoP: Bool { requireDPoP || isFAPI2 }

    /// The name pages show: the display name, else the client id.
    public var shownName: String { displayName ?? clientID }

    /// A client that signs users in (authorization code and refresh).
    public static let defaultGrantTypes = ["authorization_code", "refresh_token"]

    public init(clientID: String, secretHash: String?, scopes: [String], nativeSSOGroup: String?, redirectURIs: [String],
                postLogoutRedirectURIs: [String], grantTypes: [String] = Client.defaultGrantTypes, requireDPoP: Bool = false,
                requirePAR: Bool = false, accessTokenLifetime: Int? = nil, refreshTokenLifetime: Int? = nil, iosAppID: String? = nil,
                androidPackage: String? = nil, androidCertificateFingerprints: [String] = [], displayName: String? = nil,
                registrationID: String = "", backchannelLogoutURI: String? = nil, authMethod: String? = nil, jwks: String? = nil,
                jwksURI: String? = nil, requireSignedRequestObject: Bool = false, profile: String? = nil,
                idTokenAlgorithm: String? = nil, registrationAccessTokenHash: [UInt8]? = nil) {
        self.clientID = clientID
        self.displayName = displayName
        self.registrationID = registrationID
        self.secretHash = secretHash
        self.scopes = scopes
        self.nativeSSOGroup = nativeSSOGroup
        self.redirectURIs = redirectURIs
        self.postLogoutRedirectURIs = postLogoutRedirectURIs
        self.grantTypes = grantTypes
        self.requireDPoP = requireDPoP
        self.requirePAR = requirePAR
        self.accessTokenLifetime = accessTokenLifetime
        self.refreshTokenLifetime = refreshTokenLifetime
        self.iosAppID = iosAppID
        self.androidPackage = androidPackage
        self.androidCertificateFingerprints = androidCertificateFingerprints
        self.backchannelLogoutURI = backchannelLogoutURI
        self.authMethod = authMethod
        self.jwks = jwks
        self.jwksURI = jwksURI
        self.requireSignedRequestObject = requireSignedRequestObject
        self.profile = profile
        self.idTokenAlgorithm = idTokenAlgorithm
        self.registrationAccessTokenHash = registrationAccessTokenHash
    }

    /// Byte equality on the grant type names (they are ASCII tokens).
    public func allows(grantType: String) -> Bool { grantTypes.contains { $0.utf8.elementsEqual(grantType.utf8) } }
}

public protocol ClientReads {
    func find(clientID: String) throws -> Client?
    /// Every client, by client id.
    func list() throws -> [Client]
}

public protocol ClientStore: ClientReads {
    /// A new registration, with `client.registrationID` as its id.
    func insert(_ client: Client, at now: Int64) throws
    /// Replaces every setting and redirect URI of the client with
    /// `client.clientID` by `client`'s (its secret too). False when there
    /// is no such client.
    func update(_ client: Client) throws -> Bool
    /// Erases the client and everything issued to it: its refresh tokens,
    /// authorization codes, device secrets, pending and pushed
    /// authorization requests go in the same write unit, so nothing it holds works once
    /// this commits and a client registered later under the same id
    /// inherits nothing. False when there is no such client.
    func delete(clientID: String) throws -> Bool
}

extension ClientStore {
    /// Removes `scope` from every client registered for it (its API was
    /// removed), through the store's own `update` (so both backends do it
    /// alike); returns the ids of the clients that had it, by client id.
    public func removeScope(_ scope: String) throws -> [String] {
        var holders: [String] = []
        for client in try list() where client.scopes.contains(where: { $0.utf8.elementsEqual(scope.utf8) }) {
            var changed = client
            changed.scopes.removeAll { $0.utf8.elementsEqual(scope.utf8) }
            _ = try update(changed)
            holders.append(client.clientID)
        }
        return holders
    }
}

/// Per-group Native SSO settings. A group exists while some client names
/// it; without a settings row every setting is at its default.
public protocol NativeSSOGroupReads {
    /// True only for a group whose seed `device_id` profile is switched on.
    func allowsDeviceID(group: String) throws -> Bool
    /// The client ids in `group`, sorted.
    func members(group: String) throws -> [String]
}

public protocol NativeSSOGroupStore: NativeSSOGroupReads {
    func setAllowsDeviceID(_ allowed: Bool, group: String) throws
}
