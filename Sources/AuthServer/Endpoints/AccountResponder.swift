import IssuerStorage
import SSOCore

/// `/account`: the signed-in user's own page, by the SSO cookie alone
/// (SignedInAccount: who is asking; AccountChangeEndpoints: whether a
/// change may go ahead); a signed-out browser signs in first
/// (AccountSignIn). These endpoints render the page and hold its passkeys: add one
/// (WebAuthn §7.1, through the page's script), see when each was last
/// used, remove one. Adding one takes the current password, as changing
/// the password does: a passkey signs in alone (with `amr` mfa), so a
/// browser left signed in, or a stolen cookie, must not be enough to
/// plant one.
public final class AccountResponder: RoutedEndpointGroup {
    public static let pagePath = "/account"
    public static let optionsPath = "/account/passkeys/options"
    public static let registerPath = "/account/passkeys"
    public static let removePath = "/account/passkeys/remove"
    public static let renamePath = "/account/passkeys/rename"
    public static let confirmPath = "/account/confirm"
    public static let deletePath = "/account/delete"
    public static let emailPath = "/account/email"
    public static let confirmPasskeyOptionsPath = "/account/passkeys/confirm-options"
    public static let confirmPasskeyPath = "/account/passkeys/confirm"
    public static let paths = [pagePath, AccountClient.callbackPath, optionsPath, registerPath, removePath, renamePath, confirmPath, deletePath,
                               emailPath, confirmPasskeyOptionsPath, confirmPasskeyPath]

    /// Back to the account page after a change, with `?done=` naming what
    /// happened (AccountPage.noticeLine shows it); `detail` is for the log.
    static func back(_ notice: String, _ detail: String? = nil) -> Response {
        let response = Response.redirect(to: pagePath + "?done=" + notice)
        return detail.map(response.logging) ?? response
    }

    public let table: RouteTable

    /// The page's handlers are structs too (AccountOverview, AccountSignIn),
    /// for the reason AccountChangeEndpoints.row gives.
    public init(services: IssuerServices) {
        let changes = services.accountChangeEndpoints
        let whoIsAsking = SignedInAccount(sessions: services.sessions, users: services.users, required: false)
        let signIn = AccountSignIn(issuer: services.settings.issuer, redemption: services.accountCodeRedemption, whoIsAsking: whoIsAsking,
                                   catalogue: services.messages)
        let overview = AccountOverview(signIn: signIn, selfService: changes.selfService, sessions: services.sessions, clients: services.clients,
                                       totp: services.totp, providerLinks: services.providerLinks, reauthentication: changes.reauthentication,
                                       catalogue: services.messages)
        let deletion = AccountDeletion(changes: changes, accountChanges: services.accountChanges, catalogue: services.messages)
        let emailChange = AccountEmailChange(changes: changes, gettingIn: services.gettingIn, catalogue: services.messages)
        let passkeyConfirmation = AccountPasskeyConfirmation(changes: changes, passkeys: services.passkeys, catalogue: services.messages)
        let passkeys = AccountPasskeys(changes: changes, passkeys: services.passkeys, catalogue: services.messages)
        table = RouteTable([
            Endpoint(Self.pagePath, .read, guards: [whoIsAsking], cache: .noStore, handler: overview.page),
            // Not HEAD: it redeems a code.
            Endpoint(AccountClient.callbackPath, .get, cache: .noStore, handler: signIn.finish),
            changes.row(Self.optionsPath, passkeys.registrationOptions),
            changes.row(Self.registerPath, passkeys.register),
            changes.row(Self.removePath, passkeys.remove),
            changes.row(Self.renamePath, passkeys.rename),
            changes.row(Self.confirmPath, AccountConfirmation(changes: changes).confirm),
            changes.row(Self.deletePath, deletion.delete),
            changes.row(Self.emailPath, emailChange.request),
            changes.row(Self.confirmPasskeyOptionsPath, passkeyConfirmation.options),
            changes.row(Self.confirmPasskeyPath, passkeyConfirmation.verify),
        ])
    }
}

/// The account page itself, for the signed-in user or the sign-in.
struct AccountOverview {
    typealias SignedIn = SignedInAccount.Value
    let signIn: AccountSignIn
    let selfService: AccountSelfService
    let sessions: SSOSessions
    let clients: ClientRegistry
    let totp: TOTPEnrolments
    let providerLinks: ProviderLinks
    let reauthentication: AccountReauthentication
    let catalogue: MessageCatalogue

    /// `GET /account`: the page, in the browser's language (Accept-Language:
    /// it is reached by a link or a bookmark, with no ui_locales); a
    /// signed-out browser signs in here, through the issuer's own flow.
    func page(_ exchange: EndpointExchange) throws -> Response {
        let messages = catalogue.messages(for: exchange.request)
        guard let signedIn = try exchange.signedInIfAny() else { return signIn.start() }
        return AccountPage.render(user: signedIn.user, formToken: signedIn.formToken, notice: try? exchange.request.queryParameters().single("done"),
                                  sections: try sections(signedIn, messages, confirmedFor: reauthentication.secondsLeft(exchange.request, for: signedIn)),
                                  messages: messages)
    }

    /// The page's sections, in order: what the user has (passkeys,
    /// sessions) first, then "confirm it's you" and, once confirmed
    /// (`confirmedFor`: seconds left), the sensitive changes without a
    /// password field each; before that, only their state.
    func sections(_ signedIn: SignedIn, _ messages: Messages, confirmedFor: Int64?) throws -> [String] {
        let token = signedIn.formToken, confirmed = confirmedFor != nil
        let recoveryCodesLeft = try totp.isEnrolled(userID: signedIn.user.id) ? try totp.recoveryCodesLeft(userID: signedIn.user.id) : nil
        let passkeys = try selfService.passkeys(userID: signedIn.user.id)
        var sections = [
            AccountPage.passkeysSection(passkeys, formToken: token, confirmed: confirmed, messages: messages),
            AccountSessionsSection.render(sessions: try sessions.liveListings(userID: signedIn.user.id), currentSID: signedIn.session.sid,
                                          formToken: token, messages: messages,
                                          appName: { (try? clients.find(clientID: $0))?.shownName ?? $0 }),
            AccountReauthentication.section(formToken: token, secondsLeft: confirmedFor, hasPasskeys: !passkeys.isEmpty, messages: messages),
            AccountTOTPResponder.section(formToken: token, recoveryCodesLeft: recoveryCodesLeft, confirmed: confirmed, messages: messages),
        ]
        if let links = AccountLinksResponder.section(try providerLinks.list(userID: signedIn.user.id), formToken: token, messages: messages) {
            sections.insert(links, at: 2)
        }
        sections.append(AccountEmailChange.section(user: signedIn.user, formToken: token, confirmed: confirmed, messages: messages))
        if confirmed {
            sections.append(AccountPasswordResponder.section(formToken: token, messages: messages))
            sections.append(AccountDeletion.section(formToken: token, messages: messages))
        }
        return sections
    }
}

/// The passkeys' rows on the account page: add (options, then the
/// attestation), rename, remove.
struct AccountPasskeys {
    typealias SignedIn = SignedInAccount.Value
    let changes: AccountChangeEndpoints
    let passkeys: PasskeyCeremonies
    let catalogue: MessageCatalogue

    /// Passkey challenges are bound to the signed-in session's cookie.
    static func binding(_ signedIn: SignedIn) -> [UInt8] { SHA256.hash("gatehouse account passkey\u{0}" + signedIn.cookieSecret) }

    /// The language of the errors the page's script shows: the browser's.
    func scriptMessages(_ exchange: EndpointExchange) -> Messages { catalogue.messages(for: exchange.request) }

    func registrationOptions(_ exchange: EndpointExchange) throws -> Response {
        let signedIn = try exchange.signedIn(), user = signedIn.user, messages = scriptMessages(exchange)
        switch try changes.confirmIdentity(exchange) {
        case .missing:
            return try AccountErrors.json(400, "password_missing", messages.text("passkeys.password_missing"),
                                                     detail: "passkey options without the current password")
        case .confirmed: break
        case .locked(let detail):
            return try AccountErrors.json(400, "password_locked", messages.text("passkeys.password_locked"),
                                                     detail: "passkey options refused: \(detail)")
        case .wrong:
            return try AccountErrors.json(400, "password_wrong", messages.text("passkeys.password_wrong"),
                                                     detail: "passkey options refused: wrong current password for user \(user.id)")
        }
        do {
            return try .json(passkeys.registrationOptions(for: signedIn.user, binding: Self.binding(signedIn)))
        } catch let refusal as PasskeyRefusal {
            return try AccountErrors.json(400, "passkey_refused", messages.text("passkeys.limit_reached"), detail: refusal.description)
        }
    }

    func register(_ exchange: EndpointExchange) throws -> Response {
        let form = exchange.parameters, signedIn = try exchange.signedIn(), address = exchange.request.remoteAddress
        let messages = scriptMessages(exchange)
        guard let clientData = try? form.single("clientDataJSON"), let attestation = try? form.single("attestationObject") else {
            return try AccountErrors.json(400, "invalid_request", "clientDataJSON and attestationObject are required")
        }
        let transports = (try? form.single("transports"))?.split(separator: ",").map(String.init).filter { !$0.isEmpty }
        let response = PasskeyRegistrationResponse(clientDataJSON: clientData, attestationObject: attestation,
                                                   transports: transports.map { Array($0.prefix(8)) },
                                                   // checkedName refuses control characters; single() would hide them as nil.
                                                   name: try form.singleAllowingControlCharacters("name"))
        do {
            let passkey = try passkeys.register(response, for: signedIn.user, binding: Self.binding(signedIn))
            SecurityEvents.passkeyAdded(user: signedIn.user.email, ip: address, sid: signedIn.session.sid,
                                        name: passkey.name)
            return try .json(["status": "added", "name": passkey.name])
                .logging("passkey added for user \(signedIn.user.id)")
        } catch let refusal as PasskeyRefusal {
            return try AccountErrors.json(400, "passkey_refused", messages.text("passkeys.not_added"),
                                                     detail: "passkey registration refused: \(refusal)")
        }
    }

    /// A plain form post: the passkey's new name (checked as at
    /// registration); back to the page, which says what happened.
    func rename(_ exchange: EndpointExchange) throws -> Response {
        let form = exchange.parameters, signedIn = try exchange.signedIn(), address = exchange.request.remoteAddress
        guard let id = try? form.single("id"), let credentialID = Base64URL.decode(id), !credentialID.isEmpty else {
            return AccountResponder.back("not_found")
        }
        let name: String
        do {
            guard let given = try form.singleAllowingControlCharacters("name"), !given.trimmingASCIIWhitespace().isEmpty else {
                return AccountResponder.back("name_refused", "passkey rename without a name")
            }
            name = try PasskeyCeremonies.checkedName(given, default: "")
        } catch let refusal as PasskeyRefusal {
            return AccountResponder.back("name_refused", "passkey rename refused: \(refusal)")
        }
        let renamed = try changes.selfService.renamePasskey(credentialID: credentialID, userID: signedIn.user.id, name: name)
        guard renamed else { return AccountResponder.back("not_found", "no such passkey of user \(signedIn.user.id)") }
        SecurityEvents.passkeyRenamed(user: signedIn.user.email, ip: address, sid: signedIn.session.sid, name: name)
        return AccountResponder.back("renamed", "passkey renamed for user \(signedIn.user.id)")
    }

    /// A plain form post (no script needed): back to the page, which says what happened.
    func remove(_ exchange: EndpointExchange) throws -> Response {
        let form = exchange.parameters, signedIn = try exchange.signedIn(), address = exchange.request.remoteAddress
        guard let id = try? form.single("id"), let credentialID = Base64URL.decode(id), !credentialID.isEmpty else {
            return AccountResponder.back("not_found")
        }
        let removed = try changes.selfService.removePasskey(credentialID: credentialID, userID: signedIn.user.id)
        guard removed else { return AccountResponder.back("not_found", "no such passkey of user \(signedIn.user.id)") }
        SecurityEvents.passkeyRemoved(user: signedIn.user.email, ip: address, sid: signedIn.session.sid)
        return AccountResponder.back("removed", "passkey removed for user \(signedIn.user.id)")
    }
}
