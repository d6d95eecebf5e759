import IssuerStorage
import SSOCore

/// What every step of a sign-in knows about the pending request it
/// continues (PendingSignIn puts it on the exchange), and the pages it
/// sends the browser to.
public struct LoginStep {
    let cookieSecret: String
    let formToken: String
    let address: String
    /// The client the pending request is for (audit events).
    let clientID: String
    /// The browser's User-Agent, kept with the session it makes (/account).
    var userAgent: String? = nil
    /// The language the sign-in page was in (its `lang`, checked), kept
    /// for the pages this step sends the browser to.
    var language: String? = nil
    /// For an error page: that language, else the browser's.
    var messages: Messages = MessageCatalogue.empty.defaultMessages

    /// `&lang=…` for a redirect to a sign-in page, when the form named one.
    static func languageParameter(_ language: String?) -> String { language.map { "&lang=" + $0 } ?? "" }

    /// The password page with an error, starting over: the request is gone.
    var expiredPage: Response { .redirect(to: expiredLocation) }
    var expiredLocation: String { "/login.html?error=expired" + Self.languageParameter(language) }

    /// Counts and audits how this attempt ended.
    func record(_ result: LoginResult, user: User?) {
        SecurityEvents.signIn(result, user: user, client: clientID, ip: address)
    }

    /// A counted failure of a known account: recorded, and if it was the
    /// one that locked the account (admitted a moment ago, locked now),
    /// that too. The extra read is on the failure path only.
    func failed(_ result: LoginResult, user: User, throttle: LoginThrottle) throws {
        record(result, user: user)
        if try throttle.isLocked(.user(id: user.id)) {
            SecurityEvents.accountLocked(user: user, client: clientID, ip: address)
        }
    }

    /// The password page again, with `error`, the app's name (its
    /// `client_id`, LoginPageLocation) and the address just typed, so
    /// only the password needs typing again.
    func passwordPage(error: String, email: String? = nil) -> Response {
        .redirect(to: LoginPageLocation.page(clientID: clientID, formToken: formToken) + "&error=" + error
                  + LoginPageLocation.email(email) + Self.languageParameter(language))
    }

    func codePage(error: String? = nil, extra: String = "") -> Response {
        .redirect(to: codePageLocation(error: error, extra: extra))
    }

    func codePageLocation(error: String? = nil, extra: String = "") -> String {
        "/login-otp.html?req=" + FormParser.encodeComponent(formToken) + (error.map { "&error=" + $0 } ?? "") + extra
            + Self.languageParameter(language)
    }

    /// The page says how long to wait, in whole minutes (rounded up; the
    /// lock grows from one minute to an hour), never which key is locked:
    /// that would tell whether an account exists.
    func lockedPage(retryAfter: Int, key: LoginAdmission.LockedKey, user: User?, email: String) -> Response {
        .redirect(to: LoginPageLocation.page(clientID: clientID, formToken: formToken) + "&error=too_many_attempts"
                  + "&retry_minutes=\(Self.minutes(retryAfter))" + LoginPageLocation.email(email) + Self.languageParameter(language))
            .logging("sign-in refused: \(key.rawValue) locked for \(retryAfter) s" + (user.map { " (user \($0.id))" } ?? ""))
    }

    func lockedCodePage(retryAfter: Int, key: LoginAdmission.LockedKey, user: User, extra: String = "") -> Response {
        codePage(error: "too_many_attempts", extra: "&retry_minutes=\(Self.minutes(retryAfter))" + extra)
            .logging("TOTP step refused: \(key.rawValue) locked for \(retryAfter) s (user \(user.id))")
    }

    static func minutes(_ seconds: Int) -> Int { max(1, (seconds + 59) / 60) }

    var browser: SignInCompletion.Browser { .init(cookieSecret: cookieSecret, address: address, userAgent: userAgent) }
}
