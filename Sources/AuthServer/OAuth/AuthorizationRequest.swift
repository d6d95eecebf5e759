import IssuerStorage
import SSOCore

/// What to do with a request that failed validation.
public enum AuthorizationFailure: Error, Equatable {
    /// The client or redirect URI cannot be trusted: show an error page and
    /// never redirect (RFC 6749 §4.1.2.1, RFC 9700 §4.11). `message` is for
    /// the user (a catalogue text, shown in the request's language);
    /// `description` for the client's developer (English, /par's JSON
    /// `error_description`); `detail` for the request log; `code` and
    /// `parameter` (the one at fault) for the developer reading the page.
    case errorPage(message: PageText, description: String, detail: String, code: OAuthError.Code = .invalidRequest,
                   parameter: String? = nil)
    /// The redirect URI is trusted: send the error back to the client.
    case redirect(redirectURI: String, state: String?, error: OAuthError)
}

/// Where the parameters being validated come from (RFC 9126). The same
/// checks run for all three; the few that differ say so.
public enum AuthorizationRequestSource: Sendable {
    /// The browser's query or form at /authorize.
    case direct
    /// A client's push to /par (RFC 9126 §2.1), before any user is involved.
    case pushing
    /// A pushed request, claimed at /authorize by its request_uri (§4).
    case pushed
}

/// Each protocol check is its own named step, in the order the RFCs imply:
/// client and redirect URI first, then everything else.
public struct AuthorizationRequestValidator {
    let clients: ClientRegistry
    let hints: IDTokenHintVerifier
    let apis: APIRegistry
    let issuer: String
    /// `GATEHOUSE_REQUIRE_PAR`: every client must push (RFC 9126 §4).
    let requirePushedRequests: Bool
    /// `GATEHOUSE_SIGNUP=open`: `prompt=create` is understood.
    let signUpOpen: Bool
    /// Reads `request` (RFC 9101); nil: request objects are refused.
    let requestObjects: RequestObjects?
    static let maximumStateBytes = 1024

    /// Every parameter some step of `validate` (or /authorize, for
    /// `ui_locales`) reads. RFC 6749 §3.1: "The authorization server MUST
    /// ignore unrecognized request parameters", so a request is these and
    /// nothing else: /par keeps only these (RFC 9126 §2.1 says the pushed
    /// request is validated "as it would an authorization request"), which
    /// bounds what anyone can make the issuer store.
    public static let understoodParameters: Set<String> = [
        "client_id", "redirect_uri", "response_type", "response_mode", "scope", "state", "nonce", "code_challenge",
        "code_challenge_method", "prompt", "max_age", "login_hint", "id_token_hint", "dpop_jkt", "resource", "ui_locales",
        // RFC 9101: resolved before anything else (resolvingRequestObject),
        // or refused (checkNoRequestObjects); never ignored.
        "request", "request_uri",
    ]

    public init(clients: ClientRegistry, hints: IDTokenHintVerifier, apis: APIRegistry, issuer: String,
                requirePushedRequests: Bool = false, signUpOpen: Bool = false, requestObjects: RequestObjects? = nil) {
        self.requestObjects = requestObjects
        self.clients = clients
        self.hints = hints
        self.apis = apis
        self.issuer = issuer
        self.requirePushedRequests = requirePushedRequests
        self.signUpOpen = signUpOpen
    }

    public func validate(_ parameters: FormParameters, source: AuthorizationRequestSource = .direct) throws -> AuthorizationRequest {
        try validated(parameters, source: source).request
    }

    /// The request, and the parameters it was read from: for a request
    /// object sent to /authorize, the object's (RFC 9101 §6.3), so
    /// /authorize reads `ui_locales` from them too.
    public func validated(_ parameters: FormParameters,
                          source: AuthorizationRequestSource = .direct) throws -> (request: AuthorizationRequest, parameters: FormParameters) {
        var parameters = parameters
        let signed: Bool
        switch source {
        case .direct:
            (parameters, signed) = try resolvingRequestObject(parameters)
        case .pushing, .pushed:
            // Stored (or about to be) by /par, which resolved the object.
            signed = parameters.pairs.contains { $0.name == RequestObjects.verifiedMarker.name && $0.value == RequestObjects.verifiedMarker.value }
        }
        let (client, redirectURI) = try checkClientAndRedirectURI(parameters)
        // From here on, errors go back to the client, carrying its state.
        // An invalid state is not echoed: it could not be a value the client sent in good faith.
        let state = Self.echoableState(parameters)
        func fail(_ error: OAuthError) -> AuthorizationFailure {
            .redirect(redirectURI: redirectURI, state: state, error: error)
        }
        do {
            return (try checkRest(parameters, client: client, redirectURI: redirectURI, source: source, signed: signed), parameters)
        } catch let error as OAuthError {
            throw fail(error)
        } catch let error as FormError {
            throw fail(error.asOAuthError)
        }
    }

    /// RFC 9101 §5: a request object sent by value in `request`, beside
    /// `client_id`; its parameters replace the query's (§6.3). Until it
    /// verifies nothing in it is trusted: a failure goes back to the
    /// client only at a `redirect_uri` of the query that is registered for
    /// it, and is an error page otherwise. Without `request`, the
    /// parameters as they came (never with the verified marker).
    func resolvingRequestObject(_ parameters: FormParameters) throws -> (FormParameters, signed: Bool) {
        let unmarked = FormParameters(pairs: parameters.pairs.filter { $0.name != RequestObjects.verifiedMarker.name })
        // RFC 6749 §3.1: "Parameters sent without a value MUST be treated as
        // if they were omitted from the request."
        guard let requestObjects, (try? parameters.single("request")) != nil else { return (unmarked, false) }
        let object = try trustedParameter(parameters, "request")
        let client = try registeredClient(trustedParameter(parameters, "client_id"))
        do {
            return (try requestObjects.parameters(of: object, client: client), true)
        } catch let error as OAuthError {
            if let redirectURI = (try? parameters.single("redirect_uri")) ?? nil,
               RedirectURIMatcher.matches(requested: redirectURI, registered: client.redirectURIs) {
                let state = Self.echoableState(parameters)
                throw AuthorizationFailure.redirect(redirectURI: redirectURI, state: state, error: error)
            }
            throw AuthorizationFailure.errorPage(message: PageText("error.request_object"), description: error.description,
                                                 detail: error.logDetail, code: .invalidRequestObject, parameter: "request")
        }
    }

    func checkClientAndRedirectURI(_ parameters: FormParameters) throws -> (Client, String) {
        let client = try registeredClient(trustedParameter(parameters, "client_id"))
        // OIDC Core §3.1.2.1: redirect_uri is REQUIRED.
        let redirectURI = try trustedParameter(parameters, "redirect_uri")
        try checkRedirectURI(redirectURI, client: client)
        return (client, redirectURI)
    }

    func registeredClient(_ clientID: String) throws -> Client {
        guard let client = try clients.find(clientID: clientID) else {
            throw AuthorizationFailure.errorPage(message: PageText("error.unknown_client"), description: "client_id is not a registered client",
                                                 detail: "unknown client_id", code: .invalidClient, parameter: "client_id")
        }
        return client
    }

    /// RFC 9700 §2.1: redirect URIs are compared by exact string matching
    /// (loopback ports aside, RedirectURIMatcher).
    func checkRedirectURI(_ redirectURI: String, client: Client) throws {
        guard RedirectURIMatcher.matches(requested: redirectURI, registered: client.redirectURIs) else {
            throw AuthorizationFailure.errorPage(message: PageText("error.unregistered_redirect"),
                                                 description: "redirect_uri is not registered for this client",
                                                 detail: "redirect_uri is not registered for client \(client.clientID)", parameter: "redirect_uri")
        }
    }

    /// A request validated when it arrived, checked again when the sign-in
    /// it waited for completes: an administrator may have changed the
    /// client meanwhile (`ssoctl client update|delete`), and the answer is
    /// given under the registration as it is now, as a pushed request is
    /// when /authorize claims it (RFC 9126 §4). A redirect URI removed
    /// since is an error page (RFC 6749 §4.1.2.1: never redirect to an
    /// unregistered URI); a grant type or a scope the client lost is an
    /// error sent back to the client.
    public func recheckRegistration(_ request: AuthorizationRequest) throws {
        let client = try registeredClient(request.clientID)
        try checkRedirectURI(request.redirectURI, client: client)
        do {
            try checkGrantType(client)
            try ScopeParameter.checkKnown(request.scope, apis: apis)
            try ScopeParameter.checkAllowed(request.scope, for: client)
        } catch let error as OAuthError {
            throw AuthorizationFailure.redirect(redirectURI: request.redirectURI, state: request.state, error: error)
        }
    }

    /// client_id or redirect_uri: until both are checked nothing may be sent
    /// back to the client, so every problem with them is an error page that
    /// says which parameter and what is wrong with it.
    func trustedParameter(_ parameters: FormParameters, _ name: String) throws -> String {
        let value: String?
        do { value = try parameters.single(name) } catch let error as FormError {
            let control = error.code == .controlCharacter
            throw AuthorizationFailure.errorPage(
                message: PageText(control ? "error.parameter_control_character" : "error.parameter_repeated", ["name": name]),
                description: "\(name) \(control ? "contains a control character" : "is repeated")", detail: error.description, parameter: name)
        }
        guard let value else {
            throw AuthorizationFailure.errorPage(message: PageText("error.parameter_missing", ["name": name]), description: "\(name) is required",
                                                 detail: "\(name) missing", parameter: name)
        }
        return value
    }

    func checkRest(_ parameters: FormParameters, client: Client, redirectURI: String,
                   source: AuthorizationRequestSource, signed: Bool) throws -> AuthorizationRequest {
        try checkGrantType(client)
        try checkPushedRequestRequirement(client, source: source)
        try checkSignedRequestRequirement(client, signed: signed)
        try checkNoRequestObjects(parameters)
        try checkResponseType(parameters)
        let scope = try checkResources(parameters, scope: try checkScope(parameters, client: client))
        let codeChallenge = try checkPKCE(parameters)
        let prompt = try checkPrompt(parameters, source: source)
        let maxAge = try checkMaxAge(parameters)
        let state = try visibleText(parameters, "state", limit: Self.maximumStateBytes)
        let nonce = try visibleText(parameters, "nonce", limit: Self.maximumStateBytes)
        let loginHint = try visibleText(parameters, "login_hint", limit: 254)
        let expectedSubject = try checkIDTokenHint(parameters)
        var request = AuthorizationRequest(clientID: client.clientID, redirectURI: redirectURI, scope: scope, state: state, nonce: nonce,
                                           codeChallenge: codeChallenge, prompt: prompt, maxAge: maxAge, loginHint: loginHint,
                                           expectedSubject: expectedSubject)
        request.dpopJKT = try checkDPoPKeyThumbprint(parameters)
        return request
    }

    /// RFC 9449 §10: "dpop_jkt: ... the JWK SHA-256 Thumbprint ... of the
    /// proof-of-possession public key", which binds the code: a SHA-256,
    /// base64url without padding, so exactly 43 characters of its alphabet.
    func checkDPoPKeyThumbprint(_ parameters: FormParameters) throws -> String? {
        guard let value = try parameters.single("dpop_jkt") else { return nil }
        guard value.utf8.count == 43, Base64URL.decode(value)?.count == 32 else {
            throw OAuthError.invalidRequest("dpop_jkt must be a JWK SHA-256 thumbprint (43 base64url characters)")
        }
        return value
    }

    /// OIDC Core §3.1.2.1 id_token_hint: "ID Token previously issued by the
    /// Authorization Server being passed as a hint about the End-User's
    /// current or past authenticated session with the Client." Ours (our
    /// signature and `iss`; an expired one still names its user), then its
    /// `sub` is the only user this request may be answered for.
    func checkIDTokenHint(_ parameters: FormParameters) throws -> String? {
        guard let token = try parameters.single("id_token_hint") else { return nil }
        do { return try hints.verify(token).subject } catch let rejection as TokenRejection {
            throw OAuthError.invalidRequest("id_token_hint is not an ID token from this issuer", detail: "id_token_hint \(rejection)")
        }
    }

    /// RFC 6749 §4.1.2.1 unauthorized_client: "The client is not
    /// authorized to request an authorization code using this method."
    func checkGrantType(_ client: Client) throws {
        guard client.allows(grantType: "authorization_code") else {
            throw OAuthError(.unauthorizedClient, "this client may not use the authorization code flow")
        }
    }

    /// RFC 9126 §4: "Authorization server policy MAY dictate, either
    /// globally or on a per-client basis, that PAR be the only means for a
    /// client to pass authorization request data. In this case, the
    /// authorization server will refuse, using the invalid_request error
    /// code, to process any request to the authorization endpoint that does
    /// not have a request_uri parameter with a value obtained from the PAR
    /// endpoint." Per client: `--require-par` (§6 client metadata
    /// `require_pushed_authorization_requests`); globally:
    /// `GATEHOUSE_REQUIRE_PAR` (§5 server metadata of the same name).
    func checkPushedRequestRequirement(_ client: Client, source: AuthorizationRequestSource) throws {
        guard source == .direct, client.mustPushRequests || requirePushedRequests else { return }
        throw OAuthError.invalidRequest("this client must push its authorization request first (PAR, RFC 9126)",
                                        detail: client.isFAPI2 ? "client \(client.clientID) is held to FAPI 2.0, which requires PAR"
                                            : client.requirePAR ? "client \(client.clientID) requires PAR"
                                            : "GATEHOUSE_REQUIRE_PAR: every client must push")
    }

    /// RFC 9101 §10.5 `require_signed_request_object`: "If the value is true,
    /// the authorization server MUST reject the authorization request from
    /// the client that does not conform to this specification." At /par
    /// too: a push that is not a request object is refused there.
    func checkSignedRequestRequirement(_ client: Client, signed: Bool) throws {
        guard client.requireSignedRequestObject, !signed else { return }
        throw OAuthError.invalidRequest("this client must send its authorization request as a signed request object (RFC 9101)",
                                        detail: "client \(client.clientID) requires signed request objects")
    }

    /// RFC 8707 §2.1: resource at the authorization endpoint names the APIs
    /// the grant is for; the grant keeps only their API scopes (with the
    /// standard ones), so every token from it (refreshes too) is for them
    /// only. An unregistered resource, or one the request asks no scope
    /// at, is invalid_target (§2).
    func checkResources(_ parameters: FormParameters, scope: [String]) throws -> [String] {
        guard let resources = try ResourceIndicator.parse(parameters) else { return scope }
        return try TokenTarget.select(scope: scope, resources: resources, apis: apis.all(), issuer: issuer).scope
    }

    /// A `request` still here was not resolved (no RequestObjects given):
    /// refused rather than ignored, since the client believes its
    /// parameters are in force. A request object never holds one (RFC 9101
    /// §4). A `request_uri` never gets here from /authorize
    /// (AuthorizeResponder resolves it as a pushed request first) nor from
    /// /par (refused there, RFC 9126 §2.1); one by reference to the
    /// client's own URL is not supported (discovery:
    /// `request_uri_parameter_supported` false).
    func checkNoRequestObjects(_ parameters: FormParameters) throws {
        if try parameters.single("request") != nil { throw OAuthError(.requestNotSupported, "request objects are not supported") }
        if !parameters.values("request_uri").isEmpty { throw OAuthError(.requestURINotSupported, "request_uri is not supported") }
    }

    /// RFC 6749 §4.1.1: response_type REQUIRED, "code" for this flow.
    func checkResponseType(_ parameters: FormParameters) throws {
        guard let responseType = try parameters.single("response_type") else { throw OAuthError.invalidRequest("response_type is required") }
        guard responseType == "code" else { throw OAuthError(.unsupportedResponseType, "only response_type=code is supported") }
        if let mode = try parameters.single("response_mode"), mode != "query" {
            throw OAuthError.invalidRequest("only response_mode=query is supported")
        }
    }

    /// RFC 6749 §3.3: the scope must be within what the client may ask for.
    /// OIDC Core §3.1.2.1: "openid" MUST be present.
    func checkScope(_ parameters: FormParameters, client: Client) throws -> [String] {
        guard let text = try parameters.single("scope") else { throw OAuthError(.invalidScope, "scope is required and must include openid") }
        let scope = try ScopeParameter.parse(text)
        guard scope.contains("openid") else { throw OAuthError(.invalidScope, "scope must include openid") }
        try ScopeParameter.checkKnown(scope, apis: apis)
        try ScopeParameter.checkAllowed(scope, for: client)
        return scope
    }

    /// RFC 7636 §4.4.1 and RFC 9700 §2.1.1: code_challenge is required and
    /// the method must be S256 ("plain" is refused; an absent method means
    /// plain, RFC 7636 §4.3, so it is refused too).
    func checkPKCE(_ parameters: FormParameters) throws -> String {
        guard let challenge = try parameters.single("code_challenge") else { throw OAuthError.invalidRequest("code_challenge is required (PKCE)") }
        guard try parameters.single("code_challenge_method") == "S256" else {
            throw OAuthError.invalidRequest("code_challenge_method must be S256")
        }
        guard PKCE.isValidS256Challenge(challenge) else { throw OAuthError.invalidRequest("code_challenge is not a valid S256 challenge") }
        return challenge
    }

    /// OIDC Core §3.1.2.1: "If this parameter contains none with any other
    /// value, an error is returned."
    ///
    /// consent: "The Authorization Server SHOULD prompt the End-User for
    /// consent before returning information to the Client. If it cannot
    /// obtain consent, it MUST return an error, typically consent_required."
    /// Gatehouse has no consent page (its clients are the vendor's own,
    /// registered by the operator), so it cannot: consent_required.
    /// select_account is met by the sign-in page, where the user chooses the
    /// account by signing in with it (AuthorizeResponder), never silently.
    ///
    /// At push time consent is left for /authorize, which validates the
    /// pushed request again: RFC 9126 §2.3, "Since initial processing of the
    /// pushed authorization request does not involve resource owner
    /// interaction, error codes related to user interaction, such as
    /// consent_required defined by [OIDC], are never returned."
    ///
    /// create ("Initiating User Registration via OpenID Connect 1.0" §4.1):
    /// "the client desires that the user be shown the account creation UI
    /// rather than the login flow", only where sign-up is open; elsewhere it
    /// is an unknown value, refused as the spec asks of a value not in
    /// `prompt_values_supported` ("the OP SHOULD respond with ... an error
    /// value of invalid_request").
    func checkPrompt(_ parameters: FormParameters, source: AuthorizationRequestSource) throws -> Set<String> {
        guard let text = try parameters.single("prompt") else { return [] }
        let values = Set(text.split(separator: " ").map(String.init))
        if let unknown = values.subtracting(Self.promptValues(signUpOpen: signUpOpen)).sorted().first {
            throw OAuthError.invalidRequest("unknown prompt value", detail: "prompt value \(unknown.prefix(32).debugDescription)")
        }
        if values.contains("none") && values.count > 1 { throw OAuthError.invalidRequest("prompt=none cannot be combined with other values") }
        if values.contains("consent") && source != .pushing {
            throw OAuthError(.consentRequired, "this server has no consent page; the app is approved by its registration")
        }
        return values
    }

    /// The `prompt` values understood, as discovery lists them.
    public static func promptValues(signUpOpen: Bool) -> [String] {
        ["none", "login", "consent", "select_account"] + (signUpOpen ? ["create"] : [])
    }

    func checkMaxAge(_ parameters: FormParameters) throws -> Int? {
        guard let text = try parameters.single("max_age") else { return nil }
        guard text.utf8.count <= 10, let value = Int(text), value >= 0 else { throw OAuthError.invalidRequest("max_age must be a non-negative integer") }
        return value
    }

    /// RFC 6749 Appendix A.5: state = 1*VSCHAR, VSCHAR = %x20-7E. The same
    /// rule bounds nonce and login_hint, so no control character (CR, LF,
    /// NUL) reaches storage, logs or pages.
    func visibleText(_ parameters: FormParameters, _ name: String, limit: Int) throws -> String? {
        guard let value = try parameters.single(name) else { return nil }
        guard value.utf8.count <= limit else { throw OAuthError.invalidRequest("\(name) is too long") }
        guard Self.isVSCHARs(value, limit: limit) else { throw OAuthError.invalidRequest("\(name) must be printable ASCII") }
        return value
    }

    /// The `state` an error sent back to the client may carry: an invalid
    /// one is not echoed, it could not be a value the client sent in good faith.
    static func echoableState(_ parameters: FormParameters) -> String? {
        (try? parameters.single("state")).flatMap { $0 }.flatMap { isVSCHARs($0, limit: maximumStateBytes) ? $0 : nil }
    }

    static func isVSCHARs(_ value: String, limit: Int) -> Bool {
        value.utf8.count <= limit && value.utf8.allSatisfy { (0x20...0x7E).contains($0) }
    }
}
