import IssuerStorage
import SSOCore

/// The account page acts for the browser's own live sign-in only: the SSO
/// cookie names a session that has not ended or expired, whose user exists
/// and is not disabled. `required`: anything else is refused (`SignedOut`);
/// otherwise the handler learns there is nobody (the page then signs the
/// browser in).
public struct SignedInAccount: EndpointGuard {
    let sessions: SSOSessions
    let users: UserAccounts
    let required: Bool

    public init(sessions: SSOSessions, users: UserAccounts, required: Bool = true) {
        self.sessions = sessions
        self.users = users
        self.required = required
    }

    public var readsInput: Bool { false }

    /// The live session behind the SSO cookie, its user, and the cookie's
    /// secret (the key of the account forms' token, AccountFormToken).
    public struct Value {
        public let session: SSOSession
        public let user: User
        let cookieSecret: String
        var formToken: String { AccountFormToken.expected(for: cookieSecret) }
    }

    public func check(_ exchange: inout EndpointExchange) throws {
        exchange.account = try signedIn(exchange.request)
        exchange.accountChecked = true
        if required && exchange.account == nil { throw SignedOut() }
    }

    func signedIn(_ request: Request) throws -> Value? {
        guard let secret = request.cookies[SSOSessions.cookieName], let session = try sessions.find(secret: secret),
              let user = try users.find(id: session.userID), !user.disabled else { return nil }
        return Value(session: session, user: user, cookieSecret: secret)
    }

    /// Refused by a required SignedInAccount.
    struct SignedOut: Error {}
}
