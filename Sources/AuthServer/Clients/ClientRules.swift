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
            throw ValidationError("client_credentials is for confidential clients: give a secret with --secret-stdin")
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
    }

    /// Back-Channel Logout 1.0 §2.2: "The value MUST be an absolute URI as
    /// defined by Section 4.3 of [RFC3986]. The RP URL MAY contain port, path,
    /// and query parameter components. However, it MUST NOT include a fragment
    /// component." Gatehouse posts over HTTPS only (its outbound rules), to a
    /// host (no user information: credentials do not belong in a stored URI).
    static func checkBackchannelLogoutURI(_ uri: String) throws {
        guard uri.utf8.count <= 2048, uri.utf8.allSatisfy({ $0 > 32 && $0 < 127 }), let components = URLComponents(string: uri),
              components.scheme?.lowercased() == "https", let host = components.host, !host.isEmpty, components.fragment == nil,
              components.user == nil, components.password == nil else {
            throw ValidationError("--backchannel-logout-uri must be an absolute https URI with a host and no fragment: \(uri.debugDescription)")
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
