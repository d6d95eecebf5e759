import IssuerStorage
import SSOCore

/// What `ssoctl idp add` asks for. A preset fills in what its provider
/// always has (Apple's and Google's issuers, scopes and labels).
public struct ProviderRegistration: Sendable {
    public var name: String
    public var preset: IdentityProviderPreset
    /// Required for `generic`; Apple's and Google's are known.
    public var issuer: String?
    public var clientID: String
    /// Required but for Apple, whose secret is a JWT made from `appleKeyPEM`.
    public var secret: String?
    /// Default: `openid email profile` (Apple: `openid email name`).
    public var scopes: [String]
    /// Default: the name (Apple: "Apple", Google: "Google").
    public var label: String?
    public var appleTeamID: String?
    public var appleKeyID: String?
    public var appleKeyPEM: [UInt8]?
    public var hostedDomain: String?

    public init(name: String, preset: IdentityProviderPreset = .generic, issuer: String? = nil, clientID: String, secret: String? = nil,
                scopes: [String] = [], label: String? = nil, appleTeamID: String? = nil, appleKeyID: String? = nil, appleKeyPEM: [UInt8]? = nil,
                hostedDomain: String? = nil) {
        self.name = name
        self.preset = preset
        self.issuer = issuer
        self.clientID = clientID
        self.secret = secret
        self.scopes = scopes
        self.label = label
        self.appleTeamID = appleTeamID
        self.appleKeyID = appleKeyID
        self.appleKeyPEM = appleKeyPEM
        self.hostedDomain = hostedDomain
    }
}

/// The upstream OpenID Connect providers people may sign in with: added
/// after their discovery document checks out, listed, removed. Secrets are
/// sealed (ProviderSecretSealer) before they reach the database.
public final class IdentityProviderRegistry {
    let storage: any IssuerStorage
    let sealer: ProviderSecretSealer
    let clock: Clock

    public init(storage: any IssuerStorage, sealingKeys: any SealingKeySource, clock: @escaping Clock) {
        self.storage = storage
        sealer = ProviderSecretSealer(keys: sealingKeys)
        self.clock = clock
    }

    /// Where the provider sends people back: register this at the provider.
    public static func redirectURI(issuer: String) -> String { issuer + "/federation/callback" }

    public static let appleIssuer = "https://appleid.apple.com"
    public static let googleIssuer = "https://accounts.google.com"

    /// Checks `registration`, reads the provider's discovery document through
    /// `fetcher`, and stores the provider; nothing is stored on any refusal.
    public func add(_ registration: ProviderRegistration, fetcher: any ProviderDocumentFetching) throws -> IdentityProvider {
        let checked = try ProviderRules.check(registration)
        let endpoints = try ProviderDiscovery(fetcher: fetcher).endpoints(issuer: checked.issuer)
        let sealedSecret = try registration.secret.map { try sealer.seal(Array($0.utf8), provider: registration.name, column: .secret) }
        let appleKey = try checked.appleKey.map {
            AppleSigningKey(teamID: $0.teamID, keyID: $0.keyID,
                            sealedPrivateKey: try sealer.seal($0.pem, provider: registration.name, column: .appleKey))
        }
        let provider = IdentityProvider(name: registration.name, issuer: checked.issuer, clientID: registration.clientID, sealedSecret: sealedSecret,
                                        scopes: checked.scopes, label: checked.label, preset: registration.preset, endpoints: endpoints,
                                        appleKey: appleKey, hostedDomain: registration.hostedDomain, createdAt: clock())
        try storage.write { tx in
            guard try tx.identityProviders.find(name: provider.name) == nil else {
                throw ValidationError.conflict("an identity provider named \(provider.name) already exists")
            }
            try tx.identityProviders.insert(provider)
        }
        return provider
    }

    public func list() throws -> [IdentityProvider] { try storage.read.identityProviders.list() }

    public func find(name: String) throws -> IdentityProvider? { try storage.read.identityProviders.find(name: name) }

    /// False when there is no provider by that name.
    public func remove(name: String) throws -> Bool {
        try storage.write { try $0.identityProviders.remove(name: name) }
    }
}
