import IssuerStorage
import SSOCore

/// `/account`: the signed-in user's own page, by the SSO cookie alone
/// (AccountRequestGuard: who is asking, and whether a change may go
/// ahead); a signed-out browser signs in first (AccountSignIn). This responder renders the page and holds its passkeys: add one
/// (WebAuthn §7.1, through the page's script), see when each was last
/// used, remove one. Adding one takes the current password, as changing
/// the password does: a passkey signs in alone (with `amr` mfa), so a
/// browser left signed in, or a stolen cookie, must not be enough to
/// plant one.
public final class AccountResponder: Responder {
    let services: IssuerServices
    let guardian: AccountRequestGuard
    typealias SignedIn = AccountRequestGuard.SignedIn

    public static let pagePath = "/account"
    public static let optionsPath = "/account/passkeys/options"
    public static let registerPath = "/account/passkeys"
    public static let removePath = "/account/passkeys/remove"
    public static let renamePath = "/account/passkeys/rename"
    public static let paths = [pagePath, AccountClient.callbackPath, optionsPath, registerPath, removePath, renamePath]

    /// Back to the account page after a change, with `?done=` naming what
    /// happened (AccountPage.noticeLine shows it); `detail` is for the log.
    static func back(_ notice: String, _ detail: String? = nil) -> Response {
        let response = Response.redirect(to: pagePath + "?done=" + notice)
        return detail.map(response.logging) ?? response
    }

    let signIn: AccountSignIn

    public init(services: IssuerServices) {
        self.services = services
        guardian = AccountRequestGuard(services: services)
        signIn = AccountSignIn(services: services, guardian: guardian)
    }

    public func respond(to request: Request) throws -> Response {
        if request.path == Self.pagePath {
            guard request.method == "GET" || request.method == "HEAD" else { return .methodNotAllowed(allowed: ["GET", "HEAD"]) }
            // The browser's language (Accept-Language): the page is reached
            // by a link or a bookmark, with no ui_locales.
            let messages = services.messages.messages(for: request)
            // Signed out: the browser signs in here, through the issuer's own flow.
            guard let signedIn = try guardian.signedIn(request) else { return signIn.start() }
            return AccountPage.render(user: signedIn.user, formToken: signedIn.formToken, notice: try? request.queryParameters().single("done"),
                                      sections: try sections(signedIn, messages), messages: messages)
        }
        if request.path == AccountClient.callbackPath {
            guard request.method == "GET" else { return .methodNotAllowed(allowed: ["GET"]) }
            return try signIn.finish(request, messages: services.messages.messages(for: request))
        }
        let signedIn: SignedIn, form: FormParameters
        switch try guardian.admitChange(request) {
        case .failure(let refused): return refused.response
        case .success(let admitted): (signedIn, form) = admitted
        }
        // The language of the errors the page's script shows: the browser's.
        let messages = services.messages.messages(for: request)
        switch request.path {
        case Self.optionsPath: return try registrationOptions(form, signedIn, address: request.remoteAddress, messages: messages)
        case Self.registerPath: return try register(form, signedIn, address: request.remoteAddress, messages: messages)
        case Self.removePath: return try remove(form, signedIn, address: request.remoteAddress)
        case Self.renamePath: return try rename(form, signedIn, address: request.remoteAddress)
        default: return .plainError(404, "not_found")
        }
    }

    /// The page's sections, in order.
    func sections(_ signedIn: SignedIn, _ messages: Messages) throws -> [String] {
        [AccountPage.passkeysSection(try services.storage.read.passkeys.list(userID: signedIn.user.id), formToken: signedIn.formToken,
                                     messages: messages),
         AccountSessionsSection.render(sessions: try services.sessions.liveListings(userID: signedIn.user.id), currentSID: signedIn.session.sid,
                                       formToken: signedIn.formToken, messages: messages,
                                       appName: { (try? services.clients.find(clientID: $0))?.shownName ?? $0 }),
         AccountPasswordResponder.section(formToken: signedIn.formToken, messages: messages),
         AccountTOTPResponder.section(formToken: signedIn.formToken, enrolled: try services.totp.isEnrolled(userID: signedIn.user.id),
                                      messages: messages)]
    }

    /// Passkey challenges are bound to the signed-in session's cookie.
    static func binding(_ signedIn: SignedIn) -> [UInt8] { SHA256.hash("gatehouse account passkey\u{0}" + signedIn.cookieSecret) }

    func registrationOptions(_ form: FormParameters, _ signedIn: SignedIn, address: String, messages: Messages) throws -> Response {
        let user = signedIn.user
        switch try guardian.confirmCurrentPassword(form, of: user, address: address) {
        case nil:
            return try AccountRequestGuard.jsonError(400, "password_missing", messages.text("passkeys.password_missing"),
                                                     detail: "passkey options without the current password")
        case .verified?: break
        case .locked(let detail)?:
            return try AccountRequestGuard.jsonError(400, "password_locked", messages.text("passkeys.password_locked"),
                                                     detail: "passkey options refused: \(detail)")
        case .wrong?:
            return try AccountRequestGuard.jsonError(400, "password_wrong", messages.text("passkeys.password_wrong"),
                                                     detail: "passkey options refused: wrong current password for user \(user.id)")
        }
        do {
            return try .json(services.passkeys.registrationOptions(for: signedIn.user, binding: Self.binding(signedIn)),
                             headers: [("Cache-Control", "no-store")])
        } catch let refusal as PasskeyRefusal {
            return try AccountRequestGuard.jsonError(400, "passkey_refused", messages.text("passkeys.limit_reached"), detail: refusal.description)
        }
    }

    func register(_ form: FormParameters, _ signedIn: SignedIn, address: String, messages: Messages) throws -> Response {
        guard let clientData = try? form.single("clientDataJSON"), let attestation = try? form.single("attestationObject") else {
            return try AccountRequestGuard.jsonError(400, "invalid_request", "clientDataJSON and attestationObject are required")
        }
        let transports = (try? form.single("transports"))?.split(separator: ",").map(String.init).filter { !$0.isEmpty }
        let response = PasskeyRegistrationResponse(clientDataJSON: clientData, attestationObject: attestation,
                                                   transports: transports.map { Array($0.prefix(8)) },
                                                   // checkedName refuses control characters; single() would hide them as nil.
                                                   name: try form.singleAllowingControlCharacters("name"))
        do {
            let passkey = try services.passkeys.register(response, for: signedIn.user, binding: Self.binding(signedIn))
            SecurityEvents.passkeyAdded(user: signedIn.user.email, ip: address, sid: signedIn.session.sid,
                                        name: passkey.name)
            return try .json(["status": "added", "name": passkey.name], headers: [("Cache-Control", "no-store")])
                .logging("passkey added for user \(signedIn.user.id)")
        } catch let refusal as PasskeyRefusal {
            return try AccountRequestGuard.jsonError(400, "passkey_refused", messages.text("passkeys.not_added"),
                                                     detail: "passkey registration refused: \(refusal)")
        }
    }

    /// A plain form post: the passkey's new name (checked as at
    /// registration); back to the page, which says what happened.
    func rename(_ form: FormParameters, _ signedIn: SignedIn, address: String) throws -> Response {
        guard let id = try? form.single("id"), let credentialID = Base64URL.decode(id), !credentialID.isEmpty else {
            return Self.back("not_found")
        }
        let name: String
        do {
            guard let given = try form.singleAllowingControlCharacters("name"), !given.trimmingASCIIWhitespace().isEmpty else {
                return Self.back("name_refused", "passkey rename without a name")
            }
            name = try PasskeyCeremonies.checkedName(given, default: "")
        } catch let refusal as PasskeyRefusal {
            return Self.back("name_refused", "passkey rename refused: \(refusal)")
        }
        let renamed = try services.storage.write { tx in
            try tx.passkeys.rename(credentialID: credentialID, userID: signedIn.user.id, name: name)
        }
        guard renamed else { return Self.back("not_found", "no such passkey of user \(signedIn.user.id)") }
        SecurityEvents.passkeyRenamed(user: signedIn.user.email, ip: address, sid: signedIn.session.sid, name: name)
        return Self.back("renamed", "passkey renamed for user \(signedIn.user.id)")
    }

    /// A plain form post (no script needed): back to the page, which says what happened.
    func remove(_ form: FormParameters, _ signedIn: SignedIn, address: String) throws -> Response {
        guard let id = try? form.single("id"), let credentialID = Base64URL.decode(id), !credentialID.isEmpty else {
            return Self.back("not_found")
        }
        let removed = try services.storage.write { tx in try tx.passkeys.remove(credentialID: credentialID, userID: signedIn.user.id) }
        guard removed else { return Self.back("not_found", "no such passkey of user \(signedIn.user.id)") }
        SecurityEvents.passkeyRemoved(user: signedIn.user.email, ip: address, sid: signedIn.session.sid)
        return Self.back("removed", "passkey removed for user \(signedIn.user.id)")
    }
}
