import IssuerStorage
import SSOCore

/// The login page's "Sign in with a passkey" (WebAuthn Level 3 §7.2): the
/// page's script asks for options (`POST /login/passkey/options`), hands
/// them to `navigator.credentials.get()`, and posts the assertion back
/// (`POST /login/passkey`); both posts pass the sign-in form's guards (the
/// cross-site refusal, the pending request and its form token). A passkey
/// signs in without a password and without a TOTP code: its key and the
/// user verification it requires are two factors (amr "hwk"/"swk" and "mfa").
struct PasskeySignIn {
    let passkeys: PasskeyCeremonies
    let completion: SignInCompletion
    let answer: SignInAnswer

    /// A challenge bound to this browser's pending request: one from
    /// another browser's sign-in is refused (PasskeyCeremonies).
    static func binding(_ step: LoginStep) -> [UInt8] { SHA256.hash("gatehouse login passkey\u{0}" + step.cookieSecret) }

    func options(_ exchange: EndpointExchange) throws -> Response {
        try .json(passkeys.authenticationOptions(binding: Self.binding(try exchange.signIn())))
    }

    /// 200 `{"location": …}` (SignInAnswer.json) and the SSO cookie; 400
    /// when the passkey did not verify.
    func verify(_ exchange: EndpointExchange) throws -> Response {
        let form = exchange.parameters, step = try exchange.signIn()
        let fields = ["id", "clientDataJSON", "authenticatorData", "signature", "userHandle"]
        if let error = form.fieldError(fields) {
            step.record(.passkeyRefused, user: nil)
            return try Self.refused(step.messages, detail: error.description)
        }
        guard let id = try form.single("id"), let clientData = try form.single("clientDataJSON"),
              let authenticatorData = try form.single("authenticatorData"), let signature = try form.single("signature") else {
            step.record(.passkeyRefused, user: nil)
            return try Self.refused(step.messages, detail: "passkey sign-in without id, clientDataJSON, authenticatorData or signature")
        }
        let assertion = PasskeyAssertionResponse(id: id, clientDataJSON: clientData, authenticatorData: authenticatorData,
                                                 signature: signature, userHandle: try form.single("userHandle"))
        let user: User, passkey: PasskeyRecord
        do {
            (user, passkey) = try passkeys.authenticate(assertion, binding: Self.binding(step))
        } catch let refusal as PasskeyRefusal {
            step.record(.passkeyRefused, user: nil)
            return try Self.refused(step.messages, detail: "passkey sign-in refused: \(refusal)")
        }
        let amr = PasskeyCeremonies.authenticationMethods(of: passkey)
        let outcome = try completion.complete(user: user, amr: amr, proof: .passkey, browser: step.browser)
        return try answer.json(answer.next(outcome, user: user, amr: amr, step: step, expired: step.expiredLocation,
                                           codeAlreadyUsed: step.expiredLocation),
                               log: "signed in with passkey of user \(user.id)")
    }

    /// The page's script shows the description after its own words.
    static func refused(_ messages: Messages, detail: String) throws -> Response {
        try Response.json(["error": "passkey_refused", "error_description": messages.text("passkeys.sign_in_refused")], status: 400)
            .logging(detail)
    }
}
