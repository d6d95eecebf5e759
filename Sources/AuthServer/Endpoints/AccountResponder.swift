import IssuerStorage
import SSOCore

/// `/account`: the signed-in user's own page, by the SSO cookie alone.
/// Today it holds the user's passkeys: add one (WebAuthn §7.1, through the
/// page's script), see them with when each was last used, remove one.
///
/// Every change is a POST with two proofs that it comes from this page:
/// Fetch Metadata (`Sec-Fetch-Site: same-origin`, sent by every current
/// browser) and a form token only this browser's cookie can produce (an
/// HMAC keyed with the cookie's secret, as LogoutResponder's confirmation),
/// so another site cannot make a signed-in browser add or remove a passkey.
public final class AccountResponder: Responder {
    let services: IssuerServices
    var issuer: String { services.settings.issuer }

    public static let pagePath = "/account"
    public static let optionsPath = "/account/passkeys/options"
    public static let registerPath = "/account/passkeys"
    public static let removePath = "/account/passkeys/remove"
    public static let paths = [pagePath, optionsPath, registerPath, removePath]

    public init(services: IssuerServices) {
        self.services = services
    }

    /// Who is asking: the live session behind the SSO cookie, its user, and
    /// the cookie's secret (the key of the form token).
    struct SignedIn {
        let session: SSOSession
        let user: User
        let cookieSecret: String
        var formToken: String { AccountResponder.formToken(for: cookieSecret) }
        var binding: [UInt8] { SHA256.hash("gatehouse account passkey\u{0}" + cookieSecret) }
    }

    public func respond(to request: Request) throws -> Response {
        let signedIn = try self.signedIn(request)
        if request.path == Self.pagePath {
            guard request.method == "GET" || request.method == "HEAD" else { return .methodNotAllowed(allowed: ["GET", "HEAD"]) }
            guard let signedIn else { return AccountPage.signedOut() }
            return AccountPage.render(user: signedIn.user, passkeys: try services.storage.read.passkeys.list(userID: signedIn.user.id),
                                      formToken: signedIn.formToken, notice: try? request.queryParameters().single("done"))
        }
        guard request.method == "POST" else { return .methodNotAllowed(allowed: ["POST"]) }
        if let refusal = Self.crossSiteRefusal(request, issuer: issuer) { return refusal }
        guard let signedIn else { return try Self.jsonError(401, "signed_out", "sign in again", detail: "no live SSO session") }
        let form: FormParameters
        do { form = try request.formParameters() } catch let error as FormError {
            return try Self.jsonError(error.code == .unsupportedMediaType ? 415 : 400, "invalid_request", "malformed form", detail: error.description)
        }
        guard let token = try? form.single("csrf"), ConstantTime.equals(Array(token.utf8), Array(signedIn.formToken.utf8)) else {
            return try Self.jsonError(403, "invalid_request", "this form does not belong to your session", detail: "account form token mismatch")
        }
        switch request.path {
        case Self.optionsPath: return try registrationOptions(signedIn)
        case Self.registerPath: return try register(form, signedIn, address: request.remoteAddress)
        case Self.removePath: return try remove(form, signedIn, address: request.remoteAddress)
        default: return .plainError(404, "not_found")
        }
    }

    func signedIn(_ request: Request) throws -> SignedIn? {
        guard let secret = request.cookies[SSOSessions.cookieName], let session = try services.sessions.find(secret: secret),
              let user = try services.users.find(id: session.userID), !user.disabled else { return nil }
        return SignedIn(session: session, user: user, cookieSecret: secret)
    }

    static func formToken(for cookieSecret: String) -> String {
        Base64URL.encode(HMACSHA256.authenticate(Array("gatehouse account form".utf8), key: Array(cookieSecret.utf8)))
    }

    /// Fetch Metadata and Origin, as /login checks them.
    static func crossSiteRefusal(_ request: Request, issuer: String) -> Response? {
        if let site = request.header("sec-fetch-site"), site != "same-origin" {
            return ErrorPage.render(title: "Account", message: "This request was sent from another site.", status: 403,
                                    detail: "account CSRF refused: Sec-Fetch-Site \(site.prefix(32))")
        }
        if let origin = request.header("origin"), origin != "null", !origin.bytesEqual(issuer) {
            return ErrorPage.render(title: "Account", message: "This request was sent from another site.", status: 403,
                                    detail: "account CSRF refused: Origin is not the issuer")
        }
        return nil
    }

    func registrationOptions(_ signedIn: SignedIn) throws -> Response {
        do {
            return try .json(services.passkeys.registrationOptions(for: signedIn.user, binding: signedIn.binding),
                             headers: [("Cache-Control", "no-store")])
        } catch let refusal as PasskeyRefusal {
            return try Self.jsonError(400, "passkey_refused", "you cannot add another passkey", detail: refusal.description)
        }
    }

    func register(_ form: FormParameters, _ signedIn: SignedIn, address: String) throws -> Response {
        guard let clientData = try? form.single("clientDataJSON"), let attestation = try? form.single("attestationObject") else {
            return try Self.jsonError(400, "invalid_request", "clientDataJSON and attestationObject are required")
        }
        let transports = (try? form.single("transports"))?.split(separator: ",").map(String.init).filter { !$0.isEmpty }
        let response = PasskeyRegistrationResponse(clientDataJSON: clientData, attestationObject: attestation,
                                                   transports: transports.map { Array($0.prefix(8)) },
                                                   // checkedName refuses control characters; single() would hide them as nil.
                                                   name: try form.singleAllowingControlCharacters("name"))
        do {
            let passkey = try services.passkeys.register(response, for: signedIn.user, binding: signedIn.binding)
            SecurityEvents.passkeyAdded(user: signedIn.user.email, ip: address, sid: signedIn.session.sid,
                                        name: passkey.name)
            return try .json(["status": "added", "name": passkey.name], headers: [("Cache-Control", "no-store")])
                .logging("passkey added for user \(signedIn.user.id)")
        } catch let refusal as PasskeyRefusal {
            return try Self.jsonError(400, "passkey_refused", "that passkey could not be added", detail: "passkey registration refused: \(refusal)")
        }
    }

    /// A plain form post (no script needed): back to the page, which says what happened.
    func remove(_ form: FormParameters, _ signedIn: SignedIn, address: String) throws -> Response {
        guard let id = try? form.single("id"), let credentialID = Base64URL.decode(id), !credentialID.isEmpty else {
            return .redirect(to: Self.pagePath + "?done=not_found")
        }
        let removed = try services.storage.write { tx in try tx.passkeys.remove(credentialID: credentialID, userID: signedIn.user.id) }
        guard removed else { return .redirect(to: Self.pagePath + "?done=not_found").logging("no such passkey of user \(signedIn.user.id)") }
        SecurityEvents.passkeyRemoved(user: signedIn.user.email, ip: address, sid: signedIn.session.sid)
        return .redirect(to: Self.pagePath + "?done=removed").logging("passkey removed for user \(signedIn.user.id)")
    }

    static func jsonError(_ status: Int, _ error: String, _ description: String, detail: String? = nil) throws -> Response {
        try Response.json(["error": error, "error_description": description], status: status, headers: [("Cache-Control", "no-store")])
            .logging(detail ?? description)
    }
}
