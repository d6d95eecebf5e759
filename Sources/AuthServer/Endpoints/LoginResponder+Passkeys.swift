import IssuerStorage
import SSOCore

/// The login page's "Sign in with a passkey" (WebAuthn Level 3 §7.2): the
/// page's script asks for options, hands them to
/// `navigator.credentials.get()`, and posts the assertion back; both posts
/// carry the pending request's form token (`req`) beside its cookie, and go
/// through LoginResponder's cross-site checks first. A passkey signs in
/// without a password and without a TOTP code: its key and the user
/// verification it requires are two factors (amr "hwk"/"swk" and "mfa").
extension LoginResponder {
    public static let passkeyOptionsPath = "/login/passkey/options"
    public static let passkeyPath = "/login/passkey"

    /// A challenge bound to this browser's pending request: one from
    /// another browser's sign-in is refused (PasskeyCeremonies).
    static func passkeyBinding(_ step: LoginStep) -> [UInt8] { SHA256.hash("gatehouse login passkey\u{0}" + step.cookieSecret) }

    func passkeyOptions(_ step: LoginStep) throws -> Response {
        try .json(services.passkeys.authenticationOptions(binding: Self.passkeyBinding(step)), headers: [("Cache-Control", "no-store")])
    }

    /// 200 `{"location": …}` (where the browser goes next: the app's
    /// redirect URI with the code) and the SSO cookie; 400 when the passkey
    /// did not verify. The script follows `location` itself: fetch() cannot
    /// follow a redirect to an app's custom scheme.
    func verifyPasskey(_ form: FormParameters, _ step: LoginStep) throws -> Response {
        let assertion: PasskeyAssertionResponse
        do {
            guard let id = try form.single("id"), let clientData = try form.single("clientDataJSON"),
                  let authenticatorData = try form.single("authenticatorData"), let signature = try form.single("signature") else {
                step.record(.passkeyRefused, user: nil)
                return try Self.passkeyRefused(step.messages,
                                               detail: "passkey sign-in without id, clientDataJSON, authenticatorData or signature")
            }
            assertion = PasskeyAssertionResponse(id: id, clientDataJSON: clientData, authenticatorData: authenticatorData,
                                                 signature: signature, userHandle: try form.single("userHandle"))
        } catch let error as FormError {
            step.record(.passkeyRefused, user: nil)
            return try Self.passkeyRefused(step.messages, detail: error.description)
        }
        let user: User, passkey: PasskeyRecord
        do {
            (user, passkey) = try services.passkeys.authenticate(assertion, binding: Self.passkeyBinding(step))
        } catch let refusal as PasskeyRefusal {
            step.record(.passkeyRefused, user: nil)
            return try Self.passkeyRefused(step.messages, detail: "passkey sign-in refused: \(refusal)")
        }
        let amr = PasskeyCeremonies.authenticationMethods(of: passkey)
        let completed = try complete(user: user, amr: amr, step: step, expired: step.expiredPage) { tx in
            try pending.consume(cookieSecret: step.cookieSecret, tx)
        }
        guard let location = completed.header("Location") else { return completed }
        var answer = try Response.json(["location": location], headers: [("Cache-Control", "no-store")])
        for (name, value) in completed.headers where name == "Set-Cookie" { answer.headers.append((name, value)) }
        return answer.logging("signed in with passkey of user \(user.id)")
    }

    /// The page's script shows the description after its own words.
    static func passkeyRefused(_ messages: Messages, detail: String) throws -> Response {
        try Response.json(["error": "passkey_refused", "error_description": messages.text("passkeys.sign_in_refused")], status: 400,
                          headers: [("Cache-Control", "no-store")]).logging(detail)
    }
}
