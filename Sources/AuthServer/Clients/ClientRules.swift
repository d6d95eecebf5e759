import FoundationEssentials
import IssuerStorage
import SSOCore

/// What a client's settings must satisfy, whether it is being added or
/// changed: checked on the whole client, so an update cannot reach a
/// state `add` would refuse. Each refusal names the bad value.
struct ClientRules {
    /// RFC 7591 §2 grant type names this issuer implements for registered
    /// clients (the Native SSO token exchange follows the group instead).
    static let grantTypes = ["authorization_code", "refresh_token", "client_credentials"]

    let apis: APIRegistry
    let lifetimes: TokenLifetimes

    func check(_ client: Client) throws {
        try ClientRegistry.validate(clientID: client.clientID)
        if let name = client.displayName { try Self.checkDisplayName(name) }
        // First: whether it is confidential decides what else it may be.
        try Self.checkAuthentication(client)
        for grant in client.grantTypes where !Self.grantTypes.containsBytes(grant) {
            throw ValidationError("unknown grant type \(grant.debugDescription) (one of \(Self.grantTypes.joined(separator: ", ")))")
        }
        guard !client.grantTypes.isEmpty else { throw ValidationError("a client needs at least one grant type") }
        let signsUsersIn = client.allows(grantType: "authorization_code")
        if client.allows(grantType: "refresh_token") && !signsUsersIn {
            throw ValidationError("refresh_token needs the authorization_code grant (refresh tokens come from sign-ins)")
        }
        // RFC 6749 §4.4: "The client credentials grant type MUST only be
        // used by confidential clients."
        if client.allows(grantType: "client_credentials") && !client.isConfidential {
            throw ValidationError("client_credentials is for confidential clients: give a secret with --secret-stdin, "
                                  + "or keys with --auth-method private_key_jwt")
        }
        if signsUsersIn && client.redirectURIs.isEmpty { throw ValidationError("a client that signs users in needs at least one --redirect-uri") }
        for uri in client.redirectURIs + client.postLogoutRedirectURIs { try RedirectURIRules.validateForRegistration(uri) }
        try checkScopes(client, signsUsersIn: signsUsersIn)
        if let group = client.nativeSSOGroup { try ClientRegistry.validate(clientID: group, what: "native SSO group") }
        try checkLifetime(client.accessTokenLifetime, maximum: lifetimes.accessToken, option: "--access-token-ttl")
        try checkLifetime(client.refreshTokenLifetime, maximum: lifetimes.refreshToken, option: "--refresh-token-ttl")
        try AppIdentity.check(iosAppID: client.iosAppID, androidPackage: client.androidPackage,
                              fingerprints: client.androidCertificateFingerprints)
        if let uri = client.backchannelLogoutURI { try Self.checkBackchannelLogoutURI(uri) }
        if let algorithm = client.idTokenAlgorithm, !IssuerSigningKey.algorithms.map(\.rawValue).contains(algorithm) {
            throw ValidationError("--id-token-alg is RS256, ES256 or EdDSA: \(algorithm.debugDescription)")
        }
        try checkProfile(client)
    }

    /// `--profile fapi2`: what the FAPI 2.0 Security Profile asks of a
    /// client's registration; what it asks of each request is enforced
    /// where the request is handled (Client.isFAPI2).
    func checkProfile(_ client: Client) throws {
        guard let profile = client.profile else { return }
        guard profile == "fapi2" else { throw ValidationError("--profile is fapi2 or none: \(profile.debugDescription)") }
        // §5.3.2.1: "shall only support confidential clients" and "shall
        // authenticate clients using ... private_key_jwt" (mTLS is not offered).
        guard client.authMethod == "private_key_jwt" else {
            throw ValidationError("--profile fapi2 needs --auth-method private_key_jwt with the client's keys (FAPI 2.0 §5.3.2.1)")
        }
        // §5.4.1: "shall use PS256, ES256 or EdDSA" for signing; the issuer
        // signs ES256 and EdDSA.
        guard client.idTokenAlgorithm == "ES256" || client.idTokenAlgorithm == "EdDSA" else {
            throw ValidationError("--profile fapi2 needs --id-token-alg ES256 or EdDSA (FAPI 2.0 §5.4.1: not RS256)")
        }
        // §5.3.2.1: "shall issue authorization codes with a maximum lifetime
        // of 60 seconds"; codes live GATEHOUSE_CODE_TTL, for every client.
        guard lifetimes.authorizationCode <= 60 else {
            throw ValidationError("--profile fapi2 needs authorization codes of at most 60 s (FAPI 2.0 §5.3.2.1); "
                                  + "GATEHOUSE_CODE_TTL is \(lifetimes.authorizationCode)")
        }
    }

    /// The methods of discovery's `token_endpoint_auth_methods_supported`
    /// (Client.authenticationMethod).
    static let authMethods = ["client_secret_basic", "client_secret_post", "private_key_jwt", "none"]

    /// RFC 7591 §2: `token_endpoint_auth_method` fits what the client holds:
    /// a secret for the secret methods, keys (`jwks` or `jwks_uri`, RFC 7591
    /// §2: "MUST NOT both be present") for `private_key_jwt`, neither for
    /// `none`; keys for `private_key_jwt` or request objects (RFC 9101).
    static func checkAuthentication(_ client: Client) throws {
        if let method = client.authMethod, !authMethods.contains(method) {
            throw ValidationError("--auth-method is one of \(authMethods.joined(separator: ", ")): \(method.debugDescription)")
        }
        let hasKeys = client.jwks != nil || client.jwksURI != nil
        guard !(client.jwks != nil && client.jwksURI != nil) else { throw ValidationError("give --jwks-file or --jwks-uri, not both") }
        switch client.authMethod {
        case "private_key_jwt":
            guard hasKeys else { throw ValidationError("private_key_jwt needs the client's keys: --jwks-file FILE or --jwks-uri URI") }
            guard client.secretHash == nil else { throw ValidationError("a private_key_jwt client has no secret") }
        case "client_secret_basic", "client_secret_post":
            guard client.secretHash != nil else { throw ValidationError("\(client.authMethod ?? "") needs a secret (--secret-stdin)") }
        case "none":
            guard client.secretHash == nil else { throw ValidationError("a client with --auth-method none has no secret") }
        default:
            break
        }
        // Keys without private_key_jwt verify the client's request objects
        // only (RFC 9101 §10.5; a public app may sign its requests).
        if client.requireSignedRequestObject && !hasKeys {
            throw ValidationError("--require-signed-request-object needs the client's keys: --jwks-file FILE or --jwks-uri URI")
        }
        if let jwks = client.jwks { try checkKeySet(jwks) }
        if let uri = client.jwksURI {
            // Fetched through the outbound client: https, a host, nothing
            // that would carry credentials or a fragment.
            try checkHTTPSURI(uri, what: "--jwks-uri")
        }
    }

    /// A registered JWK Set holds at least one public signing key Gatehouse
    /// can use (ES256, PS256/RS256, EdDSA), each with a `kid` (an assertion
    /// names its key), and no private key material.
    static func checkKeySet(_ jwks: String) throws {
        guard jwks.utf8.count <= 64 * 1024, let members = try? ProviderKeys.members(Array(jwks.utf8)) else {
            throw ValidationError("--jwks-file is not a JWK Set (RFC 7517 §5) of at most 64 KiB")
        }
        // Every member, a kid or not: a private key has no place here.
        let all = (try? JSONDecoder().decode(ProviderKeys.KeySet.self, from: Data(jwks.utf8)))?.keys ?? []
        guard !all.contains(where: { $0.d != nil }) else {
            throw ValidationError("--jwks-file holds a private key: register the public keys only")
        }
        let usable = members.values.filter { member in JWSAlgorithm.allCases.contains { member.verificationKey(for: $0) != nil } }
        guard !usable.isEmpty else {
            throw ValidationError("--jwks-file has no usable signing key with a kid (EC P-256, RSA 2048-4096 bits, Ed25519)")
        }
    }

    /// Back-Channel Logout 1.0 §2.2: "The value MUST be an absolute URI as
    /// defined by Section 4.3 of [RFC3986]. The RP URL MAY contain port, path,
    /// and query parameter components. However, it MUST NOT include a fragment
    /// component." Gatehouse posts over HTTPS only (its outbound rules), to a
    /// host (no user information: credentials do not belong in a stored URI).
    static func checkBackchannelLogoutURI(_ uri: String) throws {
        try checkHTTPSURI(uri, what: "--backchannel-logout-uri")
    }

    /// A URI the issuer sends requests to (back-channel logout, a client's
    /// keys): absolute `https` with a host, printable ASCII, no fragment, no
    /// user information.
    static func checkHTTPSURI(_ uri: String, what: String) throws {
        guard uri.utf8.count <= 2048, uri.utf8.allSatisfy({ $0 > 32 && $0 < 127 }), let components = URLComponents(string: uri),
              components.scheme?.lowercased() == "https", let host = components.host, !host.isEmpty, components.fragment == nil,
              components.user == nil, components.password == nil else {
            throw ValidationError("\(what) must be an absolute https URI with a host and no fragment: \(uri.debugDescription)")
        }
    }

    /// At most this many characters: a name shares a line of a phone's
    /// screen with other words ("Continue to …").
    static let maximumDisplayNameCharacters = 64

    /// A display name is text on pages and in `ssoctl client list`: 1 to 64
    /// characters, no outer spaces, no control characters (Unicode Cc: a
    /// line break or an escape would break the listing's lines) and no
    /// format characters (Cf: a right-to-left override or an invisible
    /// joiner could make one app's name read as another's). The pages
    /// HTML-escape it like every stored value.
    static func checkDisplayName(_ name: String) throws {
        let refused: Set<Unicode.GeneralCategory> = [.control, .format, .lineSeparator, .paragraphSeparator]
        guard (1...maximumDisplayNameCharacters).contains(name.count), name.unicodeScalars.first?.properties.isWhitespace == false,
              name.unicodeScalars.last?.properties.isWhitespace == false,
              !name.unicodeScalars.contains(where: { refused.contains($0.properties.generalCategory) }) else {
            throw ValidationError("a client name is 1 to \(maximumDisplayNameCharacters) characters, without outer spaces, "
                                  + "control or formatting characters: \(name.debugDescription)")
        }
    }

    /// Every scope is a scope token the issuer knows (a standard one or a
    /// registered API's); a machine client has API scopes only.
    func checkScopes(_ client: Client, signsUsersIn: Bool) throws {
        let registered = try apis.all()
        for scope in client.scopes {
            try ClientRegistry.validate(scope: scope)
            guard registered.isKnown(scope) else {
                throw ValidationError("unknown scope \(scope) (register the API that owns it first: ssoctl api add AUDIENCE --scope \(scope))")
            }
            // The admin API takes only tokens that speak for no user: its
            // scopes are for machine clients alone, so no sign-in can ever
            // carry them to an app.
            if AdminAPIScopes.all.containsBytes(scope) && client.grantTypes != ["client_credentials"] {
                throw ValidationError("scope \(scope) is the admin API's: only a machine client (--grant client_credentials alone) may hold it")
            }
        }
        if !signsUsersIn {
            if let standard = client.scopes.first(where: StandardScopes.contains) {
                throw ValidationError("scope \(standard) is for clients that sign users in; a machine client has API scopes only")
            }
            guard !client.scopes.isEmpty else { throw ValidationError("a machine client needs at least one API --scope") }
        }
    }

    /// Seconds, at least one, at most the issuer's own maximum.
    func checkLifetime(_ value: Int?, maximum: Int, option: String) throws {
        guard let value else { return }
        guard (1...maximum).contains(value) else {
            throw ValidationError("\(option) \(value) is outside 1...\(maximum) (the issuer's maximum; 0 returns to it)")
        }
    }
}

extension Client {
    /// How the client authenticates, named as RFC 7591 §2 names it: the
    /// registered method, else `client_secret_basic` with a secret (which
    /// also takes `client_secret_post`), `none` without.
    public var authenticationMethod: String { authMethod ?? (secretHash != nil ? "client_secret_basic" : "none") }

    /// The `kid`s of the keys registered from a file, sorted; empty without.
    public var registeredKeyIDs: [String] {
        guard let jwks, let members = try? ProviderKeys.members(Array(jwks.utf8)) else { return [] }
        return members.keys.sorted()
    }
}
