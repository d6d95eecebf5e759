import SSOCore

/// What the static login page (`www/login.html`, completed by nginx's SSI
/// from its query string) is told beside its `req`:
/// - `client_id`: the app the sign-in is for; the page asks the login
///   process for its name (`/login/app-name`, ClientNameResponder), so
///   only a registered client's name, never text from the URL, is shown;
/// - `login_hint`: after a wrong password, the address just typed, so the
///   form keeps it. SSI cannot percent-decode, so the address goes
///   unescaped, and only when every character of it is one a query may
///   carry as it is (RFC 3986 pchar); the page's own pattern accepts the
///   same set, and `echo` HTML-escapes it.
///
/// `client_id` comes before `req`, which ends the address when nothing
/// else follows: scripts that take the form token as everything after
/// `req=` (the README's walkthrough does) keep working.
enum LoginPageLocation {
    /// `/login.html?client_id=…&req=…`, for the rest of the query to follow.
    static func page(clientID: String, formToken: String) -> String {
        "/login.html?client_id=" + FormParser.encodeComponent(clientID) + "&req=" + FormParser.encodeComponent(formToken)
    }

    /// `&login_hint=…` for the address typed, or nothing.
    static func email(_ email: String?) -> String {
        guard let email, isVerbatim(email) else { return "" }
        return "&login_hint=" + email
    }

    /// `local@domain`, the local part of letters, digits and `.`, `_`,
    /// `+`, `-` (at most 64), the domain of letters, digits, `.` and `-`.
    static func isVerbatim(_ email: String) -> Bool {
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, (1...64).contains(parts[0].utf8.count), (1...190).contains(parts[1].utf8.count) else { return false }
        func isAlphanumeric(_ byte: UInt8) -> Bool {
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
        }
        return parts[0].utf8.allSatisfy { isAlphanumeric($0) || Array("._+-".utf8).contains($0) }
            && parts[1].utf8.allSatisfy { isAlphanumeric($0) || Array(".-".utf8).contains($0) }
    }
}
