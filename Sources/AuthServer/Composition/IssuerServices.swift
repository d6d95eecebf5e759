import IssuerStorage
import SSOCore

/// The issuer's object graph, built once per process by its composition
/// root (each responder's main.swift, ssoctl, the tests): the storage, the
/// settings and the clock go in once, and every part gets what it needs
/// from here instead of building its own copies.
public final class IssuerServices {
    public let settings: IssuerSettings
    public let storage: any IssuerStorage
    public let sealingKeys: any SealingKeySource
    public let hasher: PasswordHasher
    public let clock: Clock
    /// The texts of the pages this process builds (account, errors,
    /// sign-out), every language; `.empty` in a process that builds none.
    public let messages: MessageCatalogue

    public init(settings: IssuerSettings, storage: any IssuerStorage, sealingKeys: any SealingKeySource,
                hasher: PasswordHasher = PasswordHasher(), clock: @escaping Clock = systemClock, messages: MessageCatalogue = .empty) {
        self.settings = settings
        self.messages = messages
        self.storage = storage
        self.sealingKeys = sealingKeys
        self.hasher = hasher
        self.clock = clock
    }

    public private(set) lazy var users = UserAccounts(storage: storage, hasher: hasher, clock: clock)
    public private(set) lazy var accountChanges = AccountChanges(storage: storage, users: users, clock: clock)
    public private(set) lazy var totp = TOTPEnrolments(storage: storage, sealer: TOTPSecretSealer(keys: sealingKeys), clock: clock)
    public private(set) lazy var apis = APIRegistry(storage: storage, clock: clock)
    public private(set) lazy var clients = ClientRegistry(storage: storage, apis: apis, lifetimes: settings.lifetimes, hasher: hasher,
                                                                         clock: clock)
    public private(set) lazy var nativeSSOGroups = NativeSSOGroups(storage: storage)
    public private(set) lazy var signingKeys = SigningKeys(storage: storage, clock: clock, tokenLifetime: settings.lifetimes.signingKeyRetention)
    public private(set) lazy var activeSigningKey = ActiveSigningKeyCache(keys: signingKeys)
    public private(set) lazy var publishedKeys = PublishedSigningKeyCache(store: signingKeys)
    public private(set) lazy var sessions = SSOSessions(storage: storage, clock: clock)
    public private(set) lazy var pendingAuthorizations = PendingAuthorizations(storage: storage, clock: clock)
    public private(set) lazy var pushedAuthorizations = PushedAuthorizations(storage: storage, clock: clock)
    public private(set) lazy var passwordMarks = PasswordVerifiedMarks(storage: storage, clock: clock)
    public private(set) lazy var codes = AuthorizationCodes(clock: clock)
    public private(set) lazy var refreshTokens = RefreshTokens(storage: storage, clock: clock)
    public private(set) lazy var deviceSecrets = DeviceSecrets(storage: storage, clock: clock)
    public private(set) lazy var loginThrottle = LoginThrottle(storage: storage, clock: clock)
    public private(set) lazy var passkeys = PasskeyCeremonies(storage: storage, users: users, issuer: settings.issuer,
                                                                          displayName: settings.brandName, clock: clock)
    public private(set) lazy var tokenIssuer = TokenIssuer(settings: settings, signingKeys: activeSigningKey, clock: clock,
                                                           algorithm: { [clients] clientID in
        try clients.find(clientID: clientID).flatMap { $0.idTokenAlgorithm.flatMap(JWSAlgorithm.init(rawValue:)) } ?? .rs256
    })
    public private(set) lazy var idTokenHints = IDTokenHintVerifier(issuer: settings.issuer, keys: publishedKeys)
    public private(set) lazy var accessTokens = IssuerAccessTokenVerifier(issuer: settings.issuer, storage: storage, keys: publishedKeys,
                                                                           clients: clients, clock: clock)
    public private(set) lazy var accountSelfService = AccountSelfService(storage: storage, throttle: loginThrottle, hasher: hasher,
                                                                        clock: clock)
    public private(set) lazy var accountCodeRedemption = AccountCodeRedemption(storage: storage, codes: codes)
    public private(set) lazy var tokenRevocation = TokenRevocation(storage: storage, accessTokenLifetime: settings.lifetimes.accessToken,
                                                                  clock: clock)
    public private(set) lazy var silentSignIn = SilentSignIn(storage: storage, codes: codes,
                                                            codeLifetime: settings.lifetimes.authorizationCode)
    public private(set) lazy var signOut = SignOut(storage: storage, clock: clock)
    /// /authorize's and /par's: one validator, so a pushed request is held
    /// to exactly the checks /authorize applies (RFC 9126 §2.1).
    public private(set) lazy var authorizationRequestValidator = AuthorizationRequestValidator(
        clients: clients, hints: idTokenHints, apis: apis, issuer: settings.issuer,
        requirePushedRequests: settings.requirePushedAuthorizationRequests, signUpOpen: settings.signup == .open,
        requestObjects: requestObjects)
    /// Dynamic client registration (RFC 7591, RFC 7592).
    public private(set) lazy var dynamicRegistration = DynamicRegistration(storage: storage, clients: clients, issuer: settings.issuer,
                                                                           clock: clock)
    /// Request objects (RFC 9101), verified with the client's registered keys.
    public private(set) lazy var requestObjects = RequestObjects(keys: clientAuthenticator.keys, issuer: settings.issuer, clock: clock)
    public private(set) lazy var signInCompletion = SignInCompletion(
        storage: storage, sessions: sessions, codes: codes, pending: pendingAuthorizations, marks: passwordMarks, throttle: loginThrottle,
        validator: authorizationRequestValidator, lifetimes: settings.lifetimes, clock: clock)
    /// The prologue the four account responders' change rows share.
    private(set) lazy var accountChangeEndpoints = AccountChangeEndpoints(issuer: settings.issuer, sessions: sessions, users: users,
                                                                          catalogue: messages, selfService: accountSelfService,
                                                                          reauthentication: AccountReauthentication(sealingKeys: sealingKeys,
                                                                                                                    clock: clock))
    /// The upstream OpenID Connect providers (`ssoctl idp`).
    public private(set) lazy var identityProviders = IdentityProviderRegistry(storage: storage, sealingKeys: sealingKeys, clock: clock)
    /// The issuer's requests to upstream providers (their JWKS and token
    /// endpoints); the composition root sets the outbound HTTPS client, the
    /// tests a fake. Unset, every request fails.
    public var providerHTTP: any ProviderDocumentFetching = NoProviderHTTP()
    /// Sign-in through upstream providers (the login process).
    public private(set) lazy var federatedSignIn = FederatedSignIn(storage: storage, registry: identityProviders, http: providerHTTP,
                                                                   completion: signInCompletion, issuer: settings.issuer, clock: clock)
    /// Users' links to upstream accounts (/account, ssoctl user links).
    public private(set) lazy var providerLinks = ProviderLinks(storage: storage, clock: clock)
    /// Sign-up, verification, password reset and invitations.
    public private(set) lazy var gettingIn = GettingIn(storage: storage, hasher: hasher, settings: settings, clock: clock)
    public private(set) lazy var clientAuthenticator = ClientAuthenticator(
        clients: clients, hasher: hasher, issuer: settings.issuer, http: providerHTTP, clock: clock,
        firstUse: { [storage, clock] hash, until in
            try storage.write { try $0.dpopProofs.remember(jtiHash: hash, expiresAt: until, now: clock()) }
        })
    public private(set) lazy var tokenLocator = PresentedTokenLocator(refreshTokens: refreshTokens, accessTokens: accessTokens)

    private var dpopCache: IssuerDPoP?

    /// DPoP at the issuer, with the nonce key (created on first use).
    public func dpop() throws -> IssuerDPoP {
        if let dpopCache { return dpopCache }
        guard let key = try sealingKeys.key(.dpopNonce, create: true) else { throw KeyStoreError(description: "no DPoP nonce key") }
        let made = IssuerDPoP(storage: storage, nonceKey: key, nonceRequired: settings.dpopNonceRequired, issuer: settings.issuer,
                              clock: clock)
        dpopCache = made
        return made
    }

    /// The refresh successor's sealing key (created on first use).
    public func refreshSealingKey() throws -> [UInt8] {
        guard let key = try sealingKeys.key(.refreshSuccessor, create: true) else {
            throw KeyStoreError(description: "no refresh sealing key")
        }
        return key
    }
}
