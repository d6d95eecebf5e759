import Foundation
import XCTest
@testable import AuthServer
import IssuerComposition
import IssuerStorage
@testable import IssuerStorageSQLite
import SQLiteClient
import SSOCore

extension LoginThrottle {
    /// Whether the account `email` finds (or, for an unknown email, that
    /// email's own counter) is locked now.
    func isAccountLocked(email: String) throws -> Bool {
        let user = try storage.read.users.find(email: email)
        return try isLocked(user.map { .user(id: $0.id) } ?? .unknown(email: email))
    }
}

/// Helpers for the TOTP, throttle and account-change tests.
extension SignInHarness {
    static let otherPassword = "another long password"

    var totpStore: TOTPEnrolments { services.totp }

    var throttle: LoginThrottle { services.loginThrottle }

    var accountChanges: AccountChanges { services.accountChanges }

    /// A user of its own (password `otherPassword`), optionally enrolled in
    /// TOTP; returns the user and the TOTP seed.
    func addUser(_ email: String, totp: Bool = false) throws -> (user: User, secret: [UInt8]?) {
        let user = try issuer.users.add(email: email, name: "Test User", password: Self.otherPassword)
        return (user, totp ? try totpStore.enrol(userID: user.id) : nil)
    }

    /// The code an authenticator app shows now, `offset` steps away.
    func code(_ secret: [UInt8], offset: Int64 = 0) -> String {
        TOTP.code(secret: secret, step: TOTP.step(at: clock.now) + offset)
    }

    func login(_ pending: PendingLogin, email: String? = DemoData.email, password: String? = SignInHarness.password,
               address: String = "127.0.0.1", file: StaticString = #filePath, line: UInt = #line) -> Response {
        var request = loginRequest(pending, email: email, password: password)
        request.remoteAddress = address
        return run(login, request, file: file, line: line)
    }

    /// POST /login from the TOTP page: `req` and `otp` only.
    func submitCode(_ pending: PendingLogin, _ otp: String?, req: String? = nil, extra: [(String, String)] = [],
                    address: String = "127.0.0.1", file: StaticString = #filePath, line: UInt = #line) -> Response {
        var pairs = [("req", req ?? pending.formToken)]
        if let otp { pairs.append(("otp", otp)) }
        var request = Self.formRequest("/login", RequestParameters(pairs + extra),
                                       headers: Self.cookieHeader([PendingAuthorizations.cookieName: pending.cookieSecret]))
        request.remoteAddress = address
        return run(login, request, file: file, line: line)
    }

    func codePage(_ pending: PendingLogin, error: String? = nil, retryMinutes: Int? = nil) -> String {
        "/login-otp.html?req=\(pending.formToken)" + (error.map { "&error=\($0)" } ?? "") + (retryMinutes.map { "&retry_minutes=\($0)" } ?? "")
    }

    /// The page a refused sign-in goes back to; a lock says how many
    /// minutes it has left (`retryMinutes`); it names the app and keeps
    /// the address typed (`email`, when it can go in the URL as it is).
    func passwordPage(_ pending: PendingLogin, error: String, retryMinutes: Int? = nil, email: String? = DemoData.email,
                      clientID: String = "mobile-app-001") -> String {
        "/login.html?client_id=\(clientID)&req=\(pending.formToken)&error=\(error)" + (retryMinutes.map { "&retry_minutes=\($0)" } ?? "")
            + (email.map { "&login_hint=\($0)" } ?? "")
    }

    /// Password step then code step for a TOTP user; returns the final response.
    func signInWithTOTP(_ email: String, secret: [UInt8], offset: Int64 = 0, address: String = "127.0.0.1",
                        file: StaticString = #filePath, line: UInt = #line) throws -> (pending: PendingLogin, response: Response) {
        let pending = try startLogin(file: file, line: line)
        let first = login(pending, email: email, password: Self.otherPassword, address: address, file: file, line: line)
        XCTAssertEqual(first.location, codePage(pending), "password step", file: file, line: line)
        return (pending, submitCode(pending, code(secret, offset: offset), address: address, file: file, line: line))
    }

    func throttleRows() throws -> [String] {
        try database.query("SELECT * FROM login_throttle ORDER BY 1").map { "\($0.values)" }
    }

    func sessionAMR(sid: String) throws -> String? {
        try database.queryOne("SELECT amr FROM sso_sessions WHERE sid = ?", [.text(sid)])?.string(0)
    }
}

extension SignInHarness {
    var sessions: SSOSessions { services.sessions }
}
