import IssuerStorage
import SSOCore

/// `/account/totp/...`: the signed-in user sets up or removes TOTP (RFC
/// 6238, an authenticator app). Plain forms, no script.
///
/// - `start` makes a fresh seed and shows it (a QR code drawn here as SVG,
///   and the Base32 key for typing in) with a form asking for the first
///   code. Nothing is stored: the seed travels in the form as `pending`,
///   sealed (AES-256-GCM under the TOTP sealing key) with its expiry, and
///   bound to this user and this session's sid by the authenticated data.
/// - `confirm` opens `pending` (tampered, another user's or session's, or
///   expired: refused), checks the code against that seed and only then
///   stores the enrolment, the confirming code counted as used.
/// - `remove` asks for the current password through the login throttle,
///   as a password change does (a browser left signed in must not be
///   enough to drop the second factor), unless "confirm it's you" opened
///   its window (AccountReauthentication), which stands for it.
/// - `confirm` answers with the ten recovery codes (RecoveryCodes), made
///   in the enrolment's write unit and shown this once; `recovery-codes`
///   makes a new set, with the current password like `remove` (a browser
///   left signed in must not be able to read a way past the second factor).
///
/// Setting up is offered while the account has no TOTP: replacing the app
/// means removing it (with the password) first, so a browser left signed
/// in cannot swap the second factor for one of its own either.
public final class AccountTOTPResponder: RoutedEndpointGroup {
    public static let startPath = "/account/totp/start"
    public static let confirmPath = "/account/totp/confirm"
    public static let removePath = "/account/totp/remove"
    public static let recoveryCodesPath = "/account/totp/recovery-codes"
    public static let paths = [startPath, confirmPath, removePath, recoveryCodesPath]

    /// How long a started setup may wait for its first code.
    static let pendingLifetime: Int64 = 600

    public let table: RouteTable
    let forms: AccountTOTPForms

    public init(services: IssuerServices) {
        let changes = services.accountChangeEndpoints
        let forms = AccountTOTPForms(changes: changes, totp: services.totp,
                                     pendingSeal: SessionBoundSeal(purpose: "gatehouse-totp-pending-v1", sealingKeys: services.sealingKeys),
                                     brandName: services.settings.brandName, catalogue: services.messages, clock: services.clock)
        self.forms = forms
        table = RouteTable([changes.row(Self.startPath, forms.start), changes.row(Self.confirmPath, forms.confirm),
                            changes.row(Self.removePath, forms.remove), changes.row(Self.recoveryCodesPath, forms.renewRecoveryCodes)])
    }

    /// The seed, or nil when `pending` is not one this session sealed or has expired.
    func open(_ pending: String, for signedIn: SignedInAccount.Value) throws -> [UInt8]? { try forms.open(pending, for: signedIn) }
}

/// The TOTP forms' handlers, and the pending seed they pass along.
struct AccountTOTPForms {
    typealias SignedIn = SignedInAccount.Value
    let changes: AccountChangeEndpoints
    let totp: TOTPEnrolments
    /// Seals the seed the setup page passes to its confirm form.
    let pendingSeal: SessionBoundSeal
    /// The authenticator app's name for the entry (OTPAuthURI).
    let brandName: String
    let catalogue: MessageCatalogue
    let clock: Clock

    /// The setup page's language: the browser's (Accept-Language).
    func messages(_ exchange: EndpointExchange) -> Messages { catalogue.messages(for: exchange.request) }

    /// Setting up takes the current password, as removing does: a code
    /// from the attacker's own app would otherwise lock the owner out of a
    /// password sign-in, from a browser left signed in or a stolen cookie.
    func start(_ exchange: EndpointExchange) throws -> Response {
        let signedIn = try exchange.signedIn(), user = signedIn.user, messages = messages(exchange)
        if try totp.isEnrolled(userID: user.id) {
            return AccountResponder.back("totp_already_on", "TOTP setup refused: user \(user.id) is enrolled")
        }
        switch try changes.confirmIdentity(exchange) {
        case .missing: return AccountResponder.back("password_missing", "TOTP setup without the current password")
        case .confirmed: break
        case .locked(let detail): return AccountResponder.back("password_locked", "TOTP setup refused: \(detail)")
        case .wrong:
            return AccountResponder.back("totp_start_password_wrong", "TOTP setup refused: wrong current password for user \(user.id)")
        }
        let secret = SecureRandom.bytes(TOTP.secretByteCount)
        let pending = try seal(secret, expiresAt: clock() + AccountTOTPResponder.pendingLifetime, for: signedIn)
        return try setupPage(secret: secret, pending: pending, signedIn, error: nil, messages: messages)
            .logging("TOTP setup started for user \(user.id)")
    }

    func confirm(_ exchange: EndpointExchange) throws -> Response {
        let form = exchange.parameters, signedIn = try exchange.signedIn(), user = signedIn.user, messages = messages(exchange)
        guard let pending = try? form.single("pending"), let secret = try open(pending, for: signedIn) else {
            return AccountResponder.back("totp_expired",
                                         "TOTP confirmation refused: pending setup missing, altered, expired or not this session's (user \(user.id))")
        }
        if try totp.isEnrolled(userID: user.id) {
            return AccountResponder.back("totp_already_on", "TOTP confirmation refused: user \(user.id) is enrolled")
        }
        // An app shows "123 456"; people type it so.
        let code = String(((try? form.single("code")) ?? "").unicodeScalars.filter { $0 != " " })
        guard let step = TOTPVerifier.matchingStep(code: code, secret: secret, at: clock(), after: Int64.min) else {
            return try setupPage(secret: secret, pending: pending, signedIn, error: "totp.wrong_code", messages: messages)
                .logging("TOTP confirmation refused: wrong code for user \(user.id)")
        }
        let codes = RecoveryCodes.generate()
        try totp.enrol(userID: user.id, secret: secret, usedStep: step, recoveryCodes: codes)
        SecurityEvents.totpEnrolled(user: user.email, ip: exchange.request.remoteAddress, sid: signedIn.session.sid)
        return recoveryCodesPage(codes, messages: messages, done: AccountResponder.pagePath + "?done=totp_on")
            .logging("TOTP enrolled by user \(user.id), with \(codes.count) recovery codes")
    }

    func renewRecoveryCodes(_ exchange: EndpointExchange) throws -> Response {
        let signedIn = try exchange.signedIn(), user = signedIn.user, address = exchange.request.remoteAddress
        switch try changes.confirmIdentity(exchange) {
        case .missing: return AccountResponder.back("password_missing", "recovery codes refused: no current password")
        case .confirmed: break
        case .locked(let detail): return AccountResponder.back("password_locked", "recovery codes refused: \(detail)")
        case .wrong:
            return AccountResponder.back("recovery_password_wrong", "recovery codes refused: wrong current password for user \(user.id)")
        }
        guard let codes = try totp.newRecoveryCodes(userID: user.id) else {
            return AccountResponder.back("totp_off", "recovery codes refused: user \(user.id) has no TOTP")
        }
        SecurityEvents.recoveryCodesRenewed(user: user.email, ip: address, sid: signedIn.session.sid)
        return recoveryCodesPage(codes, messages: messages(exchange), done: AccountResponder.pagePath)
            .logging("new recovery codes for user \(user.id)")
    }

    /// The codes, shown once; `done` leads back to /account.
    func recoveryCodesPage(_ codes: [String], messages: Messages, done: String) -> Response {
        let items = codes.map { "<li><code>\(HTMLEscaping.escape($0))</code></li>" }.joined(separator: "\n        ")
        return AccountPage.page(title: "totp.recovery_title", messages: messages, body: """
            <main class="card">
              <h1>\(messages.html("totp.recovery_title"))</h1>
              <p>\(messages.html("totp.recovery_lead"))</p>
              <ol class="recovery-codes" id="recovery-codes">
                    \(items)
              </ol>
              <a class="button" id="recovery-codes-done" href="\(HTMLEscaping.escape(done))">\(messages.html("totp.recovery_done"))</a>
            </main>
            """)
    }

    func remove(_ exchange: EndpointExchange) throws -> Response {
        let signedIn = try exchange.signedIn(), user = signedIn.user, address = exchange.request.remoteAddress
        let attempt: LoginAttempt?
        switch try changes.confirmIdentity(exchange, settleNow: false) {
        case .confirmed(let admitted): attempt = admitted
        case .missing: return AccountResponder.back("password_missing", "TOTP removal without the current password")
        case .locked(let detail): return AccountResponder.back("password_locked", "TOTP removal refused: \(detail)")
        case .wrong: return AccountResponder.back("totp_password_wrong", "TOTP removal refused: wrong current password for user \(user.id)")
        }
        let removed = try changes.selfService.removeTOTP(userID: user.id, settling: attempt)
        guard removed else { return AccountResponder.back("totp_off", "TOTP removal: user \(user.id) had no enrolment") }
        SecurityEvents.totpRemoved(user: user.email, ip: address, sid: signedIn.session.sid)
        return AccountResponder.back("totp_off", "TOTP removed by user \(user.id)")
    }

    // MARK: The pending seed

    /// Base64URL of AES-GCM(expiry as 8 bytes big-endian || seed), for this user and session.
    func seal(_ secret: [UInt8], expiresAt: Int64, for signedIn: SignedIn) throws -> String {
        try pendingSeal.seal(expiresAt: expiresAt, payload: secret, userID: signedIn.user.id, sid: signedIn.session.sid)
    }

    /// The seed, or nil when `pending` is not one this session sealed or has expired.
    func open(_ pending: String, for signedIn: SignedIn) throws -> [UInt8]? {
        guard let opened = pendingSeal.open(pending, maximumLength: 512, userID: signedIn.user.id, sid: signedIn.session.sid),
              opened.payload.count == TOTP.secretByteCount, clock() <= opened.expiresAt else { return nil }
        return opened.payload
    }

    // MARK: HTML

    /// `error`: a catalogue key, shown above the form.
    func setupPage(secret: [UInt8], pending: String, _ signedIn: SignedIn, error: String?, messages: Messages) throws -> Response {
        let escape = HTMLEscaping.escape
        let qr = try QRCodeSVG(encoding: OTPAuthURI.totp(email: signedIn.user.email, secret: secret, issuer: brandName))
            .svg(label: messages.text("totp.qr_label"))
        // Groups of four, as apps show and people type them.
        let key = Base32.encode(secret).enumerated().map { $0.offset > 0 && $0.offset % 4 == 0 ? " \($0.element)" : "\($0.element)" }.joined()
        let errorLine = error.map { "<p class=\"alert\" role=\"alert\" id=\"totp-error\">\(messages.html($0))</p>" } ?? ""
        return AccountPage.page(title: "totp.set_up", messages: messages, body: """
            <main class="card">
              <h1>\(messages.html("totp.set_up"))</h1>
              \(errorLine)
              <p>\(messages.html("totp.scan"))</p>
              <div class="qr" id="totp-qr">\(qr)</div>
              <p class="small">\(messages.html("totp.manual_key"))</p>
              <p><code class="totp-key" id="totp-secret">\(escape(key))</code></p>
              <form method="post" action="\(AccountTOTPResponder.confirmPath)" class="totp-confirm">
                \(AccountPage.tokenField(signedIn.formToken))
                <input type="hidden" name="pending" value="\(escape(pending))">
                <div class="field">
                  <label for="totp-code">\(messages.html("totp.code_label"))</label>
                  <input id="totp-code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" maxlength="6" required>
                </div>
                <button type="submit">\(messages.html("totp.turn_on"))</button>
              </form>
              <p class="small">\(messages.html("totp.setup_expires", ["minutes": String(AccountTOTPResponder.pendingLifetime / 60)])) \
            <a href="\(AccountResponder.pagePath)">\(messages.html("totp.cancel"))</a></p>
            </main>
            """)
    }
}

extension AccountTOTPResponder {
    /// The section's HTML, plain forms, no script. `recoveryCodesLeft`:
    /// nil when not enrolled. The forms only inside the confirmed window
    /// (`confirmed`): before it, the state alone.
    static func section(formToken: String, recoveryCodesLeft: Int?, confirmed: Bool, messages: Messages) -> String {
        let heading = "<h2>\(messages.html("totp.heading"))</h2>"
        guard let left = recoveryCodesLeft else {
            return """
                  \(heading)
                  <p id="totp-status"><strong>\(messages.html("totp.state_off"))</strong> \(messages.html("totp.status_off"))</p>
                  \(confirmed ? button(startPath, "totp-start", "totp.set_up", formToken, messages) : "")
            """
        }
        let leftLine = left == 0 ? "<p class=\"alert\" id=\"recovery-codes-left\">\(messages.html("totp.recovery_none_left"))</p>"
                                 : "<p class=\"small\" id=\"recovery-codes-left\">\(messages.html("totp.recovery_left", ["count": String(left)]))</p>"
        let forms = confirmed ? button(recoveryCodesPath, "recovery-codes-renew", "totp.recovery_renew", formToken, messages,
                                       note: "totp.recovery_renew_note")
                                + button(removePath, "totp-remove", "totp.remove", formToken, messages, note: "totp.remove_note") : ""
        return """
              \(heading)
              <p id="totp-status"><strong>\(messages.html("totp.state_on"))</strong> \(messages.html("totp.status_on"))</p>
              \(leftLine)
              \(forms)
        """
    }

    /// A form that is one button (the confirmed window stands for the password).
    static func button(_ action: String, _ formClass: String, _ label: String, _ formToken: String, _ messages: Messages,
                       note: String? = nil) -> String {
        """
              <form method="post" action="\(action)" class="\(formClass)">
                \(AccountPage.tokenField(formToken))
                <button type="submit" class="secondary">\(messages.html(label))</button>
                \(note.map { "<p class=\"small\">\(messages.html($0))</p>" } ?? "")
              </form>
        """
    }
}
