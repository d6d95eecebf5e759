import IssuerStorage
import SSOCore

/// The sign-in pages' endpoints, each its own row: the password step and
/// the code step (both `POST /login`, told apart by the code page's `otp`
/// field), and the passkey sign-in's two posts. All share one prologue:
/// the cross-site refusal before the body is read, then the pending
/// request behind the `gh_login` cookie with its form token, and answer
/// refusals as the sign-in pages do (SignInPageErrors).
///
/// One step for a password-only account: the password form (login.html)
/// completes the pending authorization request. Two steps for an account
/// with TOTP: a right password only marks the pending request and sends the
/// browser to login-otp.html, whose form (`req`, `otp`) posts here again;
/// the code then completes the request.
public final class LoginResponder: RoutedEndpointGroup {
    public static let path = "/login"
    public static let passkeyOptionsPath = "/login/passkey/options"
    public static let passkeyPath = "/login/passkey"

    public let table: RouteTable

    public init(services: IssuerServices) throws {
        let answer = SignInAnswer(issuer: services.settings.issuer, sessionLifetime: services.settings.lifetimes.ssoSession)
        let password = PasswordSignIn(users: services.users, hasher: services.hasher, throttle: services.loginThrottle, totp: services.totp,
                                      marks: services.passwordMarks, completion: services.signInCompletion, answer: answer,
                                      decoyHash: try services.hasher.hash(password: SecureRandom.token()))
        let code = CodeSignIn(users: services.users, throttle: services.loginThrottle, totp: services.totp, marks: services.passwordMarks,
                              completion: services.signInCompletion, answer: answer, clock: services.clock)
        let passkey = PasskeySignIn(passkeys: services.passkeys, completion: services.signInCompletion, answer: answer)
        let guards: [any EndpointGuard] = [SameOriginBrowser(issuer: services.settings.issuer),
                                           PendingSignIn(pending: services.pendingAuthorizations, catalogue: services.messages)]
        let errors = SignInPageErrors(catalogue: services.messages)
        func row(_ path: String, when selector: String? = nil, _ handler: @escaping (EndpointExchange) throws -> Response) -> Endpoint {
            Endpoint(path, .post, input: .form, guards: guards, errors: errors, cache: .noStore, when: selector, handler: handler)
        }
        table = RouteTable([row(Self.path, when: "otp", code.verify), row(Self.path, when: "recovery_code", code.recover),
                            row(Self.path, password.verify),
                            row(Self.passkeyOptionsPath, passkey.options), row(Self.passkeyPath, passkey.verify)])
    }
}
