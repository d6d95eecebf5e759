import FoundationEssentials
import IssuerStorage
import SSOCore

/// Why a registration request is refused (RFC 7591 §3.2.2, RFC 7592 §2,
/// RFC 6750 §3.1 for the tokens).
enum RegistrationRefusal: Error, Equatable {
    /// No token, or one that is unknown, expired or spent: 401.
    case invalidToken(String)
    /// RFC 7591 §3.2.2 `invalid_redirect_uri`, `invalid_client_metadata`,
    /// `invalid_software_statement`: 400.
    case invalidMetadata(code: String, description: String)

    static func metadata(_ description: String) -> RegistrationRefusal {
        .invalidMetadata(code: "invalid_client_metadata", description: description)
    }
}

/// A registration's answer (RFC 7591 §3.2.1): the client's metadata and
/// what only the issuer makes. Secrets appear only when they are new.
struct RegistrationAnswer {
    let client: Client
    /// The client secret, when this request made it (registration only).
    let secret: String?
    /// The registration access token, when this request made it.
    let registrationAccessToken: String?
}

/// Dynamic client registration (RFC 7591) and its management protocol
/// (RFC 7592): the rules of `ssoctl client add` (ClientRegistry), and on
/// top of them what a client registering itself may not do.
///
/// Choices where the RFCs leave room (as Keycloak and node-oidc-provider):
/// - Registration needs an initial access token (`ssoctl client
///   registration-token`); open registration is not offered.
/// - `token_endpoint_auth_method` defaults to `client_secret_basic` (RFC
///   7591 §2); a secret is made by the issuer and shown once.
/// - Redirect URIs follow RFC 8252 for native apps (`application_type`
///   `native`, or a public client): a private-use scheme in reverse-domain
///   form, a loopback IP literal over http, or https; web clients https.
/// - The registration access token lives as long as the client and is
///   kept only as its SHA-256.
public final class DynamicRegistration {
    let storage: any IssuerStorage
    let clients: ClientRegistry
    let issuer: String
    let clock: Clock

    /// RFC 7591 §3: "the authorization server MAY require an initial access
    /// token": at most 30 days, at most 1000 registrations each.
    static let maximumTokenLifetime: Int64 = 30 * 86_400
    static let maximumTokenUses: Int64 = 1000
    static let grantTypes: Set<String> = ["authorization_code", "refresh_token", "client_credentials"]

    init(storage: any IssuerStorage, clients: ClientRegistry, issuer: String, clock: @escaping Clock) {
        self.storage = storage
        self.clients = clients
        self.issuer = issuer
        self.clock = clock
    }

    /// The configuration endpoint of a client (RFC 7592 §2).
    func registrationClientURI(_ clientID: String) -> String {
        issuer + RegistrationResponder.clientPath + "?client_id=" + FormParser.encodeComponent(clientID)
    }

    /// `ssoctl client registration-token`: a new initial access token,
    /// shown once; only its SHA-256 is stored.
    public func issueInitialAccessToken(lifetime: Int64, uses: Int64) throws -> String {
        guard (60...Self.maximumTokenLifetime).contains(lifetime) else {
            throw ValidationError("--ttl is 60 to \(Self.maximumTokenLifetime) seconds")
        }
        guard (1...Self.maximumTokenUses).contains(uses) else { throw ValidationError("--uses is 1 to \(Self.maximumTokenUses)") }
        let token = SecureRandom.token(byteCount: 32)
        let now = clock()
        try storage.write {
            try $0.initialAccessTokens.insert(tokenHash: SHA256.hash(token), createdAt: now, expiresAt: now + lifetime, uses: uses)
        }
        return token
    }

    /// RFC 7591 §3.1: registers a client from `metadata` with one use of
    /// `initialToken`. The metadata is checked whole first; the token's
    /// use and the client are written in one unit, so a refused request
    /// spends nothing.
    func register(_ metadata: ClientMetadata, initialToken: String?) throws -> RegistrationAnswer {
        guard let initialToken else { throw RegistrationRefusal.invalidToken("") }
        // Before the secret's scrypt hash: a made-up token costs a lookup only.
        guard try storage.read.initialAccessTokens.isUsable(tokenHash: SHA256.hash(initialToken), now: clock()) else {
            throw RegistrationRefusal.invalidToken("the initial access token is unknown, expired or used up")
        }
        let secretMethod = ["client_secret_basic", "client_secret_post"].contains(metadata.token_endpoint_auth_method ?? "client_secret_basic")
        let secret = secretMethod ? SecureRandom.token(byteCount: 32) : nil
        let registrationToken = SecureRandom.token(byteCount: 32)
        var registration = try Self.registration(metadata, clientID: Self.newClientID(), secret: secret)
        registration.registrationAccessTokenHash = SHA256.hash(registrationToken)
        let client = try checked { try clients.prepared(registration) }
        let stored = try storage.write { tx -> Client in
            // RFC 6750 §3.1 invalid_token: "expired, revoked, malformed, or invalid".
            guard try tx.initialAccessTokens.consume(tokenHash: SHA256.hash(initialToken), now: clock()) else {
                throw RegistrationRefusal.invalidToken("the initial access token is unknown, expired or used up")
            }
            return try checked { try clients.insert(client, tx) }
        }
        clients.forgetCached()
        return RegistrationAnswer(client: stored, secret: secret, registrationAccessToken: registrationToken)
    }

    /// RFC 7592 §2: the client a registration access token belongs to;
    /// `invalidToken` for anything else (a client that is gone, or one
    /// `ssoctl` registered, included: §2.1 "the authorization server MUST
    /// NOT ... reveal whether the client exists").
    func client(_ clientID: String?, token: String?) throws -> Client {
        guard let clientID, let token, let client = try clients.find(clientID: clientID),
              let expected = client.registrationAccessTokenHash, ConstantTime.equals(SHA256.hash(token), expected) else {
            throw RegistrationRefusal.invalidToken("the registration access token is not valid for this client")
        }
        return client
    }

    /// RFC 7592 §2.2: "the client MUST include all client metadata fields
    /// as returned to the client from a previous registration, read, or
    /// update operation", so the request replaces the registration; what
    /// it leaves out goes back to the default. `client_id` must be the
    /// client's and the secret stays. What an operator decided stays too:
    /// the authentication method, the requirements (PAR, DPoP, signed
    /// requests, a profile) can only be added, scopes and grant types
    /// only dropped, and what the metadata cannot say (lifetimes, apps,
    /// Native SSO group, keys at a URL, the back-channel URI) is kept.
    func update(_ client: Client, with metadata: ClientMetadata, body: [String: JSONValue]) throws -> RegistrationAnswer {
        guard case .string(let clientID)? = body["client_id"], clientID.bytesEqual(client.clientID) else {
            throw RegistrationRefusal.metadata("client_id must be the client's own")
        }
        var registration = try Self.registration(metadata, clientID: client.clientID, secret: nil, updating: client)
        guard (metadata.token_endpoint_auth_method ?? "client_secret_basic") == client.authenticationMethod else {
            throw RegistrationRefusal.metadata("token_endpoint_auth_method cannot change; register a new client instead")
        }
        guard registration.scopes.allSatisfy(client.scopes.containsBytes), registration.grantTypes.allSatisfy(client.grantTypes.containsBytes) else {
            throw RegistrationRefusal.metadata("an update may drop scopes and grant types, not add them")
        }
        registration.registrationAccessTokenHash = client.registrationAccessTokenHash
        registration.keptSecretHash = client.secretHash
        registration.requirePAR = registration.requirePAR || client.requirePAR
        registration.requireDPoP = registration.requireDPoP || client.requireDPoP
        registration.requireSignedRequestObject = registration.requireSignedRequestObject || client.requireSignedRequestObject
        registration.profile = client.profile
        registration.nativeSSOGroup = client.nativeSSOGroup
        registration.accessTokenLifetime = client.accessTokenLifetime
        registration.refreshTokenLifetime = client.refreshTokenLifetime
        registration.iosAppID = client.iosAppID
        registration.androidPackage = client.androidPackage
        registration.androidCertificateFingerprints = client.androidCertificateFingerprints
        registration.jwksURI = client.jwksURI
        registration.backchannelLogoutURI = client.backchannelLogoutURI
        var replacement = try checked { try clients.prepared(registration) }
        replacement.registrationID = client.registrationID
        // Built from `client` as read before: refused if the operator (or
        // another request) changed it since, rather than undoing that.
        let stored = try checked {
            try clients.replace(replacement) { current in
                guard current == client else { throw ValidationError("the client changed while this update was made; read it again") }
            }
        }
        return RegistrationAnswer(client: stored, secret: nil, registrationAccessToken: nil)
    }

    /// 128 random bits, base64url, never starting with "-": an operator
    /// types it after `ssoctl client update`, where a leading dash would be
    /// read as an option.
    static func newClientID() -> String {
        while true {
            let id = SecureRandom.token(byteCount: 16)
            if !id.hasPrefix("-") { return id }
        }
    }

    /// RFC 7592 §2.3: the client and everything issued to it.
    /// A concurrent DELETE that removed it first makes this one's token invalid.
    func delete(_ client: Client) throws {
        do { try clients.delete(clientID: client.clientID) } catch is ValidationError {
            throw RegistrationRefusal.invalidToken("the registration access token is not valid for this client")
        }
    }

    /// A registration rule's refusal as RFC 7591's error: a redirect URI's
    /// as `invalid_redirect_uri`, any other as `invalid_client_metadata`.
    func checked<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch let error as ValidationError {
            let text = "\(error)"
            throw RegistrationRefusal.invalidMetadata(code: text.contains("redirect URI") ? "invalid_redirect_uri" : "invalid_client_metadata",
                                                      description: text)
        }
    }

    /// The metadata as `ssoctl client add` would register it, with the
    /// checks only a self-registering client needs.
    /// What a client may give itself: the standard OpenID scopes, the code
    /// flow and refresh tokens. API scopes and `client_credentials` are the
    /// operator's to grant (`ssoctl client update --add-scope/--add-grant`),
    /// as an initial access token is not a grant of every API. Keys come by
    /// value (`jwks`): a `jwks_uri` or a back-channel logout URI would make
    /// the issuer send requests where a registrant points it, so those are
    /// the operator's to set too.
    static let selfGrantedScopes: Set<String> = ["openid", "profile", "email", "offline_access"]

    static func registration(_ metadata: ClientMetadata, clientID: String, secret: String?,
                             updating stored: Client? = nil) throws -> ClientRegistration {
        // RFC 7591 §2.3: a software statement is a signed assertion by some
        // publisher; no publisher's key is trusted here.
        if metadata.software_statement != nil {
            throw RegistrationRefusal.invalidMetadata(code: "invalid_software_statement", description: "software statements are not accepted")
        }
        let grantTypes = metadata.grant_types ?? ["authorization_code"]
        guard !grantTypes.isEmpty, grantTypes.allSatisfy(Self.grantTypes.contains) else {
            throw RegistrationRefusal.metadata("grant_types may hold authorization_code, refresh_token and client_credentials")
        }
        let scopes = (metadata.scope ?? "").split(separator: " ").map(String.init)
        // A new client names only what it may give itself; an update, what
        // it already has (DynamicRegistration.update).
        if stored == nil {
            guard !grantTypes.contains("client_credentials"), scopes.allSatisfy(Self.selfGrantedScopes.contains) else {
                throw RegistrationRefusal.metadata("a registration gets OpenID scopes and the code flow; API scopes and client_credentials "
                                                   + "are added by the operator (ssoctl client update)")
            }
            guard metadata.jwks_uri == nil, metadata.backchannel_logout_uri == nil else {
                throw RegistrationRefusal.metadata("jwks_uri and backchannel_logout_uri are set by the operator; send keys as jwks")
            }
        }
        // RFC 7591 §2.1: response_types "code" goes with authorization_code.
        let responseTypes = metadata.response_types ?? (grantTypes.contains("authorization_code") ? ["code"] : [])
        guard responseTypes == (grantTypes.contains("authorization_code") ? ["code"] : []) else {
            throw RegistrationRefusal.metadata("response_types is [\"code\"] with the authorization_code grant, [] without")
        }
        let method = metadata.token_endpoint_auth_method ?? "client_secret_basic"
        let native = metadata.application_type == "native" || method == "none"
        guard [nil, "native", "web"].contains(metadata.application_type) else {
            throw RegistrationRefusal.metadata("application_type is native or web")
        }
        let redirectURIs = metadata.redirect_uris ?? []
        for uri in redirectURIs + (metadata.post_logout_redirect_uris ?? []) { try checkRedirectURI(uri, native: native) }
        if metadata.backchannel_logout_session_required == false {
            throw RegistrationRefusal.metadata("backchannel_logout_session_required: logout tokens always carry sid")
        }
        var registration = ClientRegistration(
            clientID: clientID, redirectURIs: redirectURIs, postLogoutRedirectURIs: metadata.post_logout_redirect_uris ?? [],
            scopes: scopes, secret: secret, grantTypes: grantTypes,
            requireDPoP: metadata.dpop_bound_access_tokens ?? false, requirePAR: metadata.require_pushed_authorization_requests ?? false,
            displayName: metadata.client_name, backchannelLogoutURI: metadata.backchannel_logout_uri,
            authMethod: method, jwks: metadata.jwks?.text, jwksURI: metadata.jwks_uri,
            requireSignedRequestObject: metadata.require_signed_request_object ?? false,
            idTokenAlgorithm: metadata.id_token_signed_response_alg)
        registration.scopes = registration.scopes.filter { !$0.isEmpty }
        return registration
    }

    /// RFC 8252 §7 for native apps, https for web clients; then the rules
    /// every registration meets (RedirectURIRules).
    static func checkRedirectURI(_ uri: String, native: Bool) throws {
        let invalid = { (why: String) in RegistrationRefusal.invalidMetadata(code: "invalid_redirect_uri", description: why) }
        guard let components = URLComponents(string: uri), let scheme = components.scheme?.lowercased() else {
            throw invalid("redirect URI is not an absolute URI")
        }
        switch scheme {
        case "https":
            break
        case "http":
            // RFC 8252 §7.3: loopback redirects are for native apps.
            guard native else { throw invalid("a web client's redirect URIs use https") }
        default:
            // RFC 8252 §7.1: "apps MUST use a URI scheme based on a domain
            // name under their control, expressed in reverse order".
            guard native else { throw invalid("a web client's redirect URIs use https") }
            guard scheme.contains("."), !scheme.hasPrefix("."), !scheme.hasSuffix(".") else {
                throw invalid("a private-use scheme is a reverse domain name, e.g. com.example.app (RFC 8252 §7.1)")
            }
        }
        do { try RedirectURIRules.validateForRegistration(uri) } catch { throw invalid("\(error)") }
    }
}
