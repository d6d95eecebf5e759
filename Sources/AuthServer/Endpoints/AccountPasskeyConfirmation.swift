import IssuerStorage
import SSOCore

/// "Confirm it's you" with a passkey instead of the password (WebAuthn
/// Level 3 §7.2): the account page's script asks for options
/// (`POST /account/passkeys/confirm-options`), hands them to
/// `navigator.credentials.get()`, and posts the assertion back
/// (`POST /account/passkeys/confirm`). The challenge is bound to this
/// session's cookie, user verification is required, and the passkey must
/// be one of the signed-in account's own; then the confirmed window opens
/// as after the password. A refusal is counted as a refused passkey
/// sign-in (`gatehouse_logins_total{result="passkey_refused"}`).
struct AccountPasskeyConfirmation {
    let changes: AccountChangeEndpoints
    let passkeys: PasskeyCeremonies
    let catalogue: MessageCatalogue

    static func binding(_ signedIn: SignedInAccount.Value) -> [UInt8] {
        SHA256.hash("gatehouse account confirm passkey\u{0}" + signedIn.cookieSecret)
    }

    func options(_ exchange: EndpointExchange) throws -> Response {
        try .json(passkeys.authenticationOptions(binding: Self.binding(try exchange.signedIn())))
    }

    /// 200 `{"location": "/account?done=confirmed"}` with the window's
    /// cookie; 400 when the passkey did not verify or is another account's.
    func verify(_ exchange: EndpointExchange) throws -> Response {
        let form = exchange.parameters, signedIn = try exchange.signedIn(), address = exchange.request.remoteAddress
        let messages = catalogue.messages(for: exchange.request)
        if let error = form.fieldError(["id", "clientDataJSON", "authenticatorData", "signature", "userHandle"]) {
            return try refused(messages, signedIn, address, detail: error.description)
        }
        guard let id = try form.single("id"), let clientData = try form.single("clientDataJSON"),
              let authenticatorData = try form.single("authenticatorData"), let signature = try form.single("signature") else {
            return try refused(messages, signedIn, address, detail: "passkey confirmation without id, clientDataJSON, authenticatorData or signature")
        }
        let assertion = PasskeyAssertionResponse(id: id, clientDataJSON: clientData, authenticatorData: authenticatorData,
                                                 signature: signature, userHandle: try form.single("userHandle"))
        let user: User
        do {
            (user, _) = try passkeys.authenticate(assertion, binding: Self.binding(signedIn))
        } catch let refusal as PasskeyRefusal {
            return try refused(messages, signedIn, address, detail: "passkey confirmation refused: \(refusal)")
        }
        // Another account's passkey in this browser proves nothing about this one.
        guard user.id == signedIn.user.id else {
            return try refused(messages, signedIn, address,
                               detail: "passkey confirmation refused: user \(user.id)'s passkey in user \(signedIn.user.id)'s session")
        }
        var response = try Response.json(["location": AccountResponder.pagePath + "?done=confirmed"])
        response.addCookie(try changes.reauthentication.cookie(for: signedIn))
        return response.logging("user \(user.id) confirmed it's them with a passkey for \(AccountReauthentication.lifetime) s")
    }

    func refused(_ messages: Messages, _ signedIn: SignedInAccount.Value, _ address: String, detail: String) throws -> Response {
        SecurityEvents.signIn(.passkeyRefused, user: signedIn.user, client: nil, ip: address, sid: signedIn.session.sid)
        return try Response.json(["error": "passkey_refused", "error_description": messages.text("passkeys.sign_in_refused")], status: 400)
            .logging(detail)
    }
}
