/// Which quirks an upstream provider has beyond OpenID Connect. Open (a
/// struct) so a row written by a newer build still reads.
public struct IdentityProviderPreset: RawRepresentable, Hashable, Sendable {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Any OpenID Connect provider, as its discovery document describes it.
    public static let generic = Self(rawValue: "generic")
    /// Sign in with Apple: `response_mode=form_post`, a client secret that is
    /// a JWT signed with the team's ES256 key, the name only on first use.
    public static let apple = Self(rawValue: "apple")
    /// Google: `hd` for a Workspace domain when one is configured.
    public static let google = Self(rawValue: "google")
}

/// What the issuer needs to send a user to a provider and check what comes
/// back, found by the provider's discovery document when it was added.
public struct ProviderEndpoints: Equatable, Sendable {
    public let authorization: String
    public let token: String
    public let jwks: String
    /// RFC 9207: the provider puts `iss` in its authorization responses
    /// (`authorization_response_iss_parameter_supported`), so a response
    /// without it, or naming another issuer, is refused (mix-up defence).
    public let sendsIssuer: Bool

    public init(authorization: String, token: String, jwks: String, sendsIssuer: Bool = false) {
        self.authorization = authorization
        self.token = token
        self.jwks = jwks
        self.sendsIssuer = sendsIssuer
    }
}

/// Sign in with Apple's client secret is made, not stored: a JWT signed
/// with this key (the team's .p8, sealed), renewed before it expires.
public struct AppleSigningKey: Equatable, Sendable {
    public let teamID: String
    public let keyID: String
    /// The PKCS#8 PEM, sealed (AES-256-GCM, the provider's name as
    /// authenticated data).
    public let sealedPrivateKey: [UInt8]

    public init(teamID: String, keyID: String, sealedPrivateKey: [UInt8]) {
        self.teamID = teamID
        self.keyID = keyID
        self.sealedPrivateKey = sealedPrivateKey
    }
}

/// An upstream OpenID Connect provider (`ssoctl idp add`).
public struct IdentityProvider: Equatable, Sendable {
    /// The short name: the `idp` claim, the login page's control, the
    /// administrator's handle (`[a-z0-9-]`, 1 to 32).
    public let name: String
    /// The provider's issuer identifier, exactly as its discovery says.
    public let issuer: String
    public let clientID: String
    /// The client secret, sealed; nil for Apple (its secret is made from
    /// `appleKey`) or a provider that needs none.
    public let sealedSecret: [UInt8]?
    public let scopes: [String]
    /// What the login page says: "Continue with LABEL".
    public let label: String
    public let preset: IdentityProviderPreset
    public let endpoints: ProviderEndpoints
    public let appleKey: AppleSigningKey?
    /// Google's `hd`: only accounts of this Workspace domain.
    public let hostedDomain: String?
    public let createdAt: Int64

    public init(name: String, issuer: String, clientID: String, sealedSecret: [UInt8]?, scopes: [String], label: String,
                preset: IdentityProviderPreset, endpoints: ProviderEndpoints, appleKey: AppleSigningKey? = nil, hostedDomain: String? = nil,
                createdAt: Int64) {
        self.name = name
        self.issuer = issuer
        self.clientID = clientID
        self.sealedSecret = sealedSecret
        self.scopes = scopes
        self.label = label
        self.preset = preset
        self.endpoints = endpoints
        self.appleKey = appleKey
        self.hostedDomain = hostedDomain
        self.createdAt = createdAt
    }
}

public protocol IdentityProviderReads {
    /// Every provider, by name (bytes).
    func list() throws -> [IdentityProvider]
    func find(name: String) throws -> IdentityProvider?
}

public protocol IdentityProviderStore: IdentityProviderReads {
    /// Adds `provider`; the caller has checked in the same write unit that
    /// the name is free (the primary key still refuses a concurrent one).
    func insert(_ provider: IdentityProvider) throws
    /// Removes the provider; false when there is none by that name.
    func remove(name: String) throws -> Bool
}
