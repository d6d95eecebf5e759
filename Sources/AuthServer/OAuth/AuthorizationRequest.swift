import SSOCore

/// A validated authorization request (RFC 6749 §4.1.1, OIDC Core §3.1.2.1).
public struct AuthorizationRequest: Equatable, Sendable {
    public let clientID: String
    public let redirectURI: String
    public let scope: [String]
    public let state: String?
    public let nonce: String?
    public let codeChallenge: String
    public let prompt: Set<String>
    public let maxAge: Int?
    public let loginHint: String?
}

/// What to do with a request that failed validation.
public enum AuthorizationFailure: Error, Equatable {
    /// The client or redirect URI cannot be trusted: show an error page and
    /// never redirect (RFC 6749 §4.1.2.1, RFC 9700 §4.11).
    case errorPage(String)
    /// The redirect URI is trusted: send the error back to the client.
    case redirect(redirectURI: String, state: String?, error: OAuthError)
}

/// Each protocol check is its own named step, in the order the RFCs imply:
/// client and redirect URI first, then everything else.
public struct AuthorizationRequestValidator {
    let clients: ClientStore
    static let maximumStateBytes = 1024

    public init(clients: ClientStore) { self.clients = clients }

    public func validate(_ parameters: FormParameters) throws -> AuthorizationRequest {
        let (client, redirectURI) = try checkClientAndRedirectURI(parameters)
        // From here on, errors go back to the client, carrying its state.
        // An invalid state is not echoed: it could not be a value the client sent in good faith.
        let state = (try? parameters.single("state")).flatMap { $0 }.flatMap { Self.isVSCHARs($0, limit: Self.maximumStateBytes) ? $0 : nil }
        func fail(_ error: OAuthError) -> AuthorizationFailure {
            .redirect(redirectURI: redirectURI, state: state, error: error)
        }
        do {
            return try checkRest(parameters, client: client, redirectURI: redirectURI)
        } catch let error as OAuthError {
            throw fail(error)
        } catch let error as FormError {
            throw fail(.invalidRequest(error.code == .repeatedParameter ? "parameter \(error.detail) is repeated" : "malformed parameter"))
        }
    }

    func checkClientAndRedirectURI(_ parameters: FormParameters) throws -> (Client, String) {
        guard let clientID = try? parameters.single("client_id") else {
            throw AuthorizationFailure.errorPage("The request has no valid client_id.")
        }
        guard let client = try clients.find(clientID: clientID) else {
            throw AuthorizationFailure.errorPage("The app that sent you here is not registered with this sign-in service.")
        }
        // OIDC Core §3.1.2.1: redirect_uri is REQUIRED.
        guard let redirectURI = try? parameters.single("redirect_uri") else {
            throw AuthorizationFailure.errorPage("The request has no valid redirect_uri.")
        }
        guard RedirectURIMatcher.matches(requested: redirectURI, registered: client.redirectURIs) else {
            throw AuthorizationFailure.errorPage("The app asked to return to an address it has not registered.")
        }
        return (client, redirectURI)
    }

    func checkRest(_ parameters: FormParameters, client: Client, redirectURI: String) throws -> AuthorizationRequest {
        try checkNoRequestObjects(parameters)
        try checkResponseType(parameters)
        let scope = try checkScope(parameters, client: client)
        let codeChallenge = try checkPKCE(parameters)
        let prompt = try checkPrompt(parameters)
        let maxAge = try checkMaxAge(parameters)
        let state = try visibleText(parameters, "state", limit: Self.maximumStateBytes)
        let nonce = try visibleText(parameters, "nonce", limit: Self.maximumStateBytes)
        let loginHint = try visibleText(parameters, "login_hint", limit: 254)
        return AuthorizationRequest(clientID: client.clientID, redirectURI: redirectURI, scope: scope, state: state, nonce: nonce,
                                    codeChallenge: codeChallenge, prompt: prompt, maxAge: maxAge, loginHint: loginHint)
    }

    /// OIDC Core §6: request objects are optional; refuse them explicitly
    /// rather than ignore parameters the client believes are in force.
    func checkNoRequestObjects(_ parameters: FormParameters) throws {
        if !parameters.values("request").isEmpty { throw OAuthError(.requestNotSupported, "request objects are not supported") }
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
        var scope: [String] = []
        for token in text.split(separator: " ", omittingEmptySubsequences: true).map(String.init) where !scope.contains(token) {
            scope.append(token)
        }
        guard scope.contains("openid") else { throw OAuthError(.invalidScope, "scope must include openid") }
        guard scope.allSatisfy(client.scopes.contains) else { throw OAuthError(.invalidScope, "scope includes values this client may not request") }
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
    func checkPrompt(_ parameters: FormParameters) throws -> Set<String> {
        guard let text = try parameters.single("prompt") else { return [] }
        let values = Set(text.split(separator: " ").map(String.init))
        guard values.isSubset(of: ["none", "login", "consent", "select_account"]) else { throw OAuthError.invalidRequest("unknown prompt value") }
        if values.contains("none") && values.count > 1 { throw OAuthError.invalidRequest("prompt=none cannot be combined with other values") }
        return values
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

    static func isVSCHARs(_ value: String, limit: Int) -> Bool {
        value.utf8.count <= limit && value.utf8.allSatisfy { (0x20...0x7E).contains($0) }
    }
}
