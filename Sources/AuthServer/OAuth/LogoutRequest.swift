import IssuerStorage
import SSOCore

/// A validated RP-initiated logout request (OpenID Connect RP-Initiated
/// Logout 1.0 §2).
public struct LogoutRequest: Sendable {
    public let hint: IDTokenHint?
    /// The client, named by `client_id` or by the hint's audience.
    public let client: Client?
    /// Registered for `client`, matched exactly; nil: no redirect.
    public let postLogoutRedirectURI: String?
    public let state: String?
    /// The session-bound value of the confirmation link (see LogoutResponder).
    public let confirmation: String?

    /// The request's own protocol parameters, to repeat in a confirmation link.
    public let parameters: [(String, String)]
}

/// A logout request the issuer cannot act on or redirect for: shown as an
/// error page, never redirected (RP-Initiated Logout §4: "If any of the
/// validation procedures defined in this specification fail, the OP MUST
/// NOT perform post-logout redirection to an RP").
public struct LogoutRequestFailure: Error, Equatable {
    /// Shown to the user, in the request's language; names the problem,
    /// never echoes a value.
    public let message: PageText
    /// Log-only.
    public let detail: String
    public let status: Int
    init(_ message: PageText, detail: String, status: Int = 400) {
        self.message = message
        self.detail = detail
        self.status = status
    }

    /// The error page, in `messages`' language.
    public func response(_ messages: Messages) -> Response {
        ErrorPage.render(title: "logout.error_title", message: message, messages: messages, status: status, detail: detail)
    }
}

/// Each check is its own step; nothing is changed until all have passed.
public struct LogoutRequestValidator {
    let clients: ClientRegistry
    let hints: IDTokenHintVerifier
    static let maximumStateBytes = 1024

    public init(clients: ClientRegistry, hints: IDTokenHintVerifier) {
        self.clients = clients
        self.hints = hints
    }

    public func validate(_ parameters: FormParameters) throws -> LogoutRequest {
        do {
            let hint = try checkIDTokenHint(parameters)
            let client = try checkClient(parameters, hint: hint)
            let redirectURI = try checkPostLogoutRedirectURI(parameters, client: client)
            let state = try checkState(parameters)
            let confirmation = try parameters.single("confirm").flatMap { $0.utf8.count <= 128 ? $0 : nil }
            var repeated: [(String, String)] = []
            for name in ["id_token_hint", "client_id", "post_logout_redirect_uri", "state"] {
                if let value = try parameters.single(name) { repeated.append((name, value)) }
            }
            // §2 ui_locales, a hint only: the confirmation page's language,
            // kept for the page after it; its language tags alone, normalised.
            let languages = LanguagePreferences.ranges(uiLocales: (try? parameters.single("ui_locales")) ?? nil)
            if !languages.isEmpty { repeated.append(("ui_locales", languages.joined(separator: " "))) }
            return LogoutRequest(hint: hint, client: client, postLogoutRedirectURI: redirectURI, state: state,
                                 confirmation: confirmation, parameters: repeated)
        } catch let error as FormError {
            throw LogoutRequestFailure(PageText("logout.malformed"), detail: error.description)
        }
    }

    /// RP-Initiated Logout §2 id_token_hint: "ID Token previously issued by
    /// the OP to the RP passed to the Logout Endpoint as a hint about the
    /// End-User's current authenticated session with the Client."
    func checkIDTokenHint(_ parameters: FormParameters) throws -> IDTokenHint? {
        guard let token = try parameters.single("id_token_hint") else { return nil }
        do { return try hints.verify(token) } catch let rejection as TokenRejection {
            throw LogoutRequestFailure(PageText("logout.foreign_id_token"), detail: "id_token_hint \(rejection)")
        }
    }

    /// RP-Initiated Logout §2 client_id: "When both client_id and
    /// id_token_hint are present, the OP MUST verify that the Client
    /// Identifier matches the one used when issuing the ID Token."
    func checkClient(_ parameters: FormParameters, hint: IDTokenHint?) throws -> Client? {
        let clientID = try parameters.single("client_id")
        if let clientID, let hint, !clientID.bytesEqual(hint.clientID) {
            throw LogoutRequestFailure(PageText("logout.two_apps"), detail: "client_id differs from the hint's aud")
        }
        guard let id = clientID ?? hint?.clientID else { return nil }
        guard let client = try clients.find(clientID: id) else {
            throw LogoutRequestFailure(PageText("error.unknown_client"), detail: "unknown client")
        }
        return client
    }

    /// RP-Initiated Logout §3: "The value MUST have been previously
    /// registered with the OP" and "the OP MUST NOT perform post-logout
    /// redirection unless the OP has other means of confirming the
    /// legitimacy of the post-logout redirection target" — here, a client
    /// identified by id_token_hint or client_id, and an exact match among its
    /// registered post-logout redirect URIs (RFC 9700 §2.1: exact matching).
    func checkPostLogoutRedirectURI(_ parameters: FormParameters, client: Client?) throws -> String? {
        guard let uri = try parameters.single("post_logout_redirect_uri") else { return nil }
        guard let client else {
            throw LogoutRequestFailure(PageText("logout.unnamed_app"), detail: "post_logout_redirect_uri without client_id or id_token_hint")
        }
        guard client.postLogoutRedirectURIs.containsBytes(uri) else {
            throw LogoutRequestFailure(PageText("error.unregistered_redirect"), detail: "unregistered post_logout_redirect_uri")
        }
        return uri
    }

    /// RFC 6749 Appendix A.5 (state = 1*VSCHAR), as at /authorize: no
    /// control character reaches the redirect or a page.
    func checkState(_ parameters: FormParameters) throws -> String? {
        guard let state = try parameters.single("state") else { return nil }
        guard AuthorizationRequestValidator.isVSCHARs(state, limit: Self.maximumStateBytes) else {
            throw LogoutRequestFailure(PageText("logout.malformed"), detail: "state is not 1 to 1024 VSCHARs")
        }
        return state
    }
}
