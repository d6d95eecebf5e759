import Foundation
import XCTest
@testable import AuthServer
import IssuerComposition
import IssuerStorage
@testable import IssuerStorageSQLite
import SQLiteClient
import SSOCore

/// TOTP on /account, in-process: start shows a QR code and the key and
/// stores nothing; confirm with the right code enrols (the next sign-in
/// asks for a code), with a wrong one does not; a pending setup of another
/// user or session, expired or altered is refused; remove needs the
/// current password and is throttled; cross-site posts are refused.
final class AccountTOTPTests: SignInTestCase {
    typealias H = SignInHarness
    let bobEmail = "bob@example.com"
    var responder: AccountTOTPResponder!
    var account: AccountResponder!
    var bob: User!

    override func setUpWithError() throws {
        try super.setUpWithError()
        responder = AccountTOTPResponder(services: harness.services)
        account = AccountResponder(services: harness.services)
        bob = try harness.addUser(bobEmail).user
        AuditLog.recorded = []
    }

    override func tearDown() {
        AuditLog.recorded = nil
        super.tearDown()
    }

    // MARK: Helpers

    var events: [AuditEvent] { AuditLog.recorded ?? [] }
    func events(named name: String) -> [AuditEvent] { events.filter { $0.event == name } }

    func sessionCookie(for user: User) throws -> String {
        try harness.services.storage.write { tx in try harness.services.sessions.create(userID: user.id, lifetime: 3600, tx).secret }
    }

    func enrolled(_ user: User) throws -> Bool { try harness.services.totp.isEnrolled(userID: user.id) }

    func post(_ path: String, cookie: String, fields: [(String, String)] = [], csrf: String? = nil, headers: [String: String]? = nil,
              address: String = "127.0.0.1", file: StaticString = #filePath, line: UInt = #line) -> Response {
        let pairs = [("csrf", csrf ?? AccountFormToken.expected(for: cookie))] + fields
        var allHeaders = headers ?? ["origin": harness.issuerOrigin, "sec-fetch-site": "same-origin"]
        allHeaders["cookie"] = H.cookieHeader([SSOSessions.cookieName: cookie])["cookie"]
        var request = H.formRequest(path, RequestParameters(pairs), headers: allHeaders)
        request.remoteAddress = address
        return harness.run(responder, request, file: file, line: line)
    }

    func accountPage(_ cookie: String, query: String = "", sudo: String? = nil) -> String {
        var cookies = [SSOSessions.cookieName: cookie]
        cookies[AccountReauthentication.cookieName] = sudo
        return harness.run(account, Request(method: "GET", path: AccountResponder.pagePath, query: query,
                                            headers: H.cookieHeader(cookies))).bodyText
    }

    /// "Confirm it's you" with the password: the window's cookie.
    func confirmedWindow(_ cookie: String, file: StaticString = #filePath, line: UInt = #line) throws -> String {
        let pairs = [("csrf", AccountFormToken.expected(for: cookie)), ("current", H.otherPassword)]
        let headers = ["origin": harness.issuerOrigin, "sec-fetch-site": "same-origin",
                       "cookie": H.cookieHeader([SSOSessions.cookieName: cookie])["cookie"] ?? ""]
        let response = harness.run(account, H.formRequest(AccountResponder.confirmPath, RequestParameters(pairs), headers: headers),
                                   file: file, line: line)
        XCTAssertEqual(response.location, "/account?done=confirmed", file: file, line: line)
        return try XCTUnwrap(response.cookie(AccountReauthentication.cookieName)?.value, file: file, line: line)
    }

    /// The value of `name="<name>" value="..."` or the text of `id="<id>"`.
    func hiddenValue(_ page: String, _ name: String) -> String? {
        guard let range = page.range(of: "name=\"\(name)\" value=\"") else { return nil }
        return String(page[range.upperBound...].prefix { $0 != "\"" })
    }

    func shownSecret(_ page: String) -> [UInt8]? {
        guard let range = page.range(of: "id=\"totp-secret\">") else { return nil }
        let key = page[range.upperBound...].prefix { $0 != "<" }.filter { $0 != " " }
        return Base32.decode(String(key))
    }

    /// POST start; the pending value and the seed the page shows.
    func start(_ cookie: String, file: StaticString = #filePath, line: UInt = #line) throws -> (pending: String, secret: [UInt8], page: String) {
        let response = post(AccountTOTPResponder.startPath, cookie: cookie, fields: [("current", H.otherPassword)], file: file, line: line)
        XCTAssertEqual(response.status, 200, response.bodyText, file: file, line: line)
        let page = response.bodyText
        return (try XCTUnwrap(hiddenValue(page, "pending"), file: file, line: line), try XCTUnwrap(shownSecret(page), file: file, line: line), page)
    }

    func confirm(_ cookie: String, pending: String, code: String, file: StaticString = #filePath, line: UInt = #line) -> Response {
        post(AccountTOTPResponder.confirmPath, cookie: cookie, fields: [("pending", pending), ("code", code)], file: file, line: line)
    }

    // MARK: Start and confirm

    func testStartShowsAQRCodeAndTheKeyAndStoresNothing() throws {
        let cookie = try sessionCookie(for: bob)
        XCTAssertFalse(accountPage(cookie).contains("action=\"\(AccountTOTPResponder.startPath)\""), "not before confirming")
        XCTAssertTrue(accountPage(cookie, sudo: try confirmedWindow(cookie)).contains("action=\"\(AccountTOTPResponder.startPath)\""),
                      "the section offers setup once confirmed")
        var result: (pending: String, secret: [UInt8], page: String)!
        try assertDatabaseUnchanged("start") { result = try start(cookie) }
        let page = result.page
        XCTAssertEqual(result.secret.count, TOTP.secretByteCount)
        XCTAssertTrue(page.contains("<svg xmlns=\"http://www.w3.org/2000/svg\""), "an inline SVG QR code")
        XCTAssertTrue(page.contains("role=\"img\""))
        XCTAssertTrue(page.contains("autocomplete=\"one-time-code\"") && page.contains("inputmode=\"numeric\""))
        XCTAssertTrue(page.contains("action=\"\(AccountTOTPResponder.confirmPath)\""))
        XCTAssertFalse(page.contains("style="), "CSP style-src 'self'")
        // The QR code is the otpauth URI of that very seed.
        let expected = try QRCodeSVG(encoding: OTPAuthURI.totp(email: bobEmail, secret: result.secret, issuer: "Gatehouse")).svg(label: "QR code for your authenticator app")
        XCTAssertTrue(page.contains(expected))
        XCTAssertFalse(try enrolled(bob))
        XCTAssertFalse(result.pending.contains(Base32.encode(result.secret)), "the seed is sealed in the form")
        XCTAssertTrue(events.isEmpty)
        // Two starts: two different seeds.
        XCTAssertNotEqual(try start(cookie).secret, result.secret)
    }

    func testConfirmWithTheRightCodeEnrolsAndTheNextSignInAsksForACode() throws {
        let cookie = try sessionCookie(for: bob)
        let setup = try start(cookie)
        let response = confirm(cookie, pending: setup.pending, code: harness.code(setup.secret))
        XCTAssertEqual(response.status, 200, "the recovery codes, shown once")
        XCTAssertEqual(response.header("Cache-Control"), "no-store")
        XCTAssertTrue(response.bodyText.contains("href=\"/account?done=totp_on\""))
        let codes = recoveryCodes(response.bodyText)
        XCTAssertEqual(codes.count, 10)
        XCTAssertEqual(Set(try harness.database.query("SELECT code_hash FROM totp_recovery_codes").map { $0.bytes(0) }),
                       Set(codes.compactMap { RecoveryCodes.hash($0) }), "the codes shown are the ones stored, hashed")
        XCTAssertTrue(try enrolled(bob))
        XCTAssertEqual(try harness.services.totp.credential(userID: bob.id)?.secret, setup.secret, "the confirmed seed is stored")
        XCTAssertEqual(events(named: "totp_enrolled").count, 1)
        XCTAssertEqual(events(named: "totp_enrolled").first?.user, bobEmail)
        let page = accountPage(cookie, query: "done=totp_on", sudo: try confirmedWindow(cookie))
        XCTAssertTrue(page.contains("Two-step sign-in is on"))
        XCTAssertTrue(page.contains("action=\"\(AccountTOTPResponder.removePath)\""))
        XCTAssertFalse(page.contains("action=\"\(AccountTOTPResponder.startPath)\""))

        // The code that confirmed it is spent; the next one signs in.
        let pending = try harness.startLogin()
        XCTAssertEqual(harness.login(pending, email: bobEmail, password: H.otherPassword).location, harness.codePage(pending), "asks for a code")
        XCTAssertEqual(harness.submitCode(pending, harness.code(setup.secret)).location, harness.codePage(pending, error: "invalid_code"),
                       "the confirming code is used once")
        clock.advance(TOTP.period)
        let (_, signedIn) = try harness.signInWithTOTP(bobEmail, secret: setup.secret)
        XCTAssertEqual(signedIn.locationBase, H.customSchemeRedirect)
        XCTAssertNotNil(signedIn.locationQuery["code"])
    }

    func testConfirmWithAWrongCodeEnrolsNothingAndShowsTheSetupAgain() throws {
        let cookie = try sessionCookie(for: bob)
        let setup = try start(cookie)
        let right = harness.code(setup.secret)
        for wrong in [right == "000000" ? "111111" : "000000", harness.code(setup.secret, offset: 3), "12345", "abcdef", ""] {
            try assertDatabaseUnchanged("wrong code \(wrong)") {
                let response = confirm(cookie, pending: setup.pending, code: wrong)
                XCTAssertEqual(response.status, 200, wrong)
                XCTAssertTrue(response.bodyText.contains("id=\"totp-error\""), wrong)
                XCTAssertEqual(hiddenValue(response.bodyText, "pending"), setup.pending, "the same setup continues")
                XCTAssertEqual(shownSecret(response.bodyText), setup.secret)
            }
        }
        XCTAssertFalse(try enrolled(bob))
        XCTAssertTrue(events(named: "totp_enrolled").isEmpty)
        // And the right code still works afterwards (with a space, as apps show it).
        XCTAssertEqual(recoveryCodes(confirm(cookie, pending: setup.pending, code: String(right.prefix(3)) + " " + right.dropFirst(3)).bodyText).count,
                       10)
        XCTAssertTrue(try enrolled(bob))
    }

    func testNewRecoveryCodesNeedTheCurrentPasswordAndVoidTheOldOnes() throws {
        let cookie = try sessionCookie(for: bob)
        let setup = try start(cookie)
        let first = recoveryCodes(confirm(cookie, pending: setup.pending, code: harness.code(setup.secret)).bodyText)
        XCTAssertTrue(accountPage(cookie, query: "").contains("Recovery codes left: 10 of 10."))
        try assertDatabaseUnchanged("a wrong current password") {
            XCTAssertEqual(post(AccountTOTPResponder.recoveryCodesPath, cookie: cookie, fields: [("current", "wrong password")]).location,
                           "/account?done=recovery_password_wrong")
        }
        let renewed = post(AccountTOTPResponder.recoveryCodesPath, cookie: cookie, fields: [("current", H.otherPassword)])
        XCTAssertEqual(renewed.status, 200)
        let second = recoveryCodes(renewed.bodyText)
        XCTAssertEqual(second.count, 10)
        XCTAssertTrue(Set(first).isDisjoint(with: second))
        XCTAssertEqual(Set(try harness.database.query("SELECT code_hash FROM totp_recovery_codes").map { $0.bytes(0) }),
                       Set(second.compactMap { RecoveryCodes.hash($0) }))
        XCTAssertEqual(events(named: "recovery_codes_renewed").count, 1)
    }

    /// The codes listed on the recovery codes page.
    func recoveryCodes(_ page: String) -> [String] {
        page.components(separatedBy: "<li><code>").dropFirst().compactMap { $0.components(separatedBy: "</code>").first }
    }

    func testAPendingSetupOfAnotherUserOrSessionIsRefused() throws {
        let bobCookie = try sessionCookie(for: bob)
        let setup = try start(bobCookie)
        let code = harness.code(setup.secret)
        let aliceCookie = try sessionCookie(for: harness.alice)
        let bobOtherCookie = try sessionCookie(for: bob)
        for (cookie, what) in [(aliceCookie, "another user"), (bobOtherCookie, "another session of the same user")] {
            try assertDatabaseUnchanged(what) {
                XCTAssertEqual(confirm(cookie, pending: setup.pending, code: code).location, "/account?done=totp_expired", what)
            }
        }
        XCTAssertFalse(try enrolled(harness.alice))
        XCTAssertFalse(try enrolled(bob))
        XCTAssertTrue(accountPage(bobCookie, query: "done=totp_expired").contains("That setup has expired"))
    }

    func testAnExpiredPendingSetupIsRefused() throws {
        let cookie = try sessionCookie(for: bob)
        let setup = try start(cookie)
        clock.advance(AccountTOTPResponder.pendingLifetime)
        let stillValid = try XCTUnwrap(responder.open(setup.pending, for: XCTUnwrap(SignedInAccount(sessions: harness.services.sessions, users: harness.services.users).signedIn(
            H.formRequest("/", RequestParameters([]), headers: H.cookieHeader([SSOSessions.cookieName: cookie]))))))
        XCTAssertEqual(stillValid, setup.secret, "valid up to its expiry")
        clock.advance(1)
        try assertDatabaseUnchanged("expired") {
            XCTAssertEqual(confirm(cookie, pending: setup.pending, code: harness.code(setup.secret)).location, "/account?done=totp_expired")
        }
        XCTAssertFalse(try enrolled(bob))
    }

    func testATamperedPendingSetupIsRefused() throws {
        let cookie = try sessionCookie(for: bob)
        let setup = try start(cookie)
        var sealed = try XCTUnwrap(Base64URL.decode(setup.pending))
        let code = harness.code(setup.secret)
        var candidates = ["", "AAAA", String(repeating: "A", count: 2000), setup.pending + "A"]
        for index in [0, 12, 20, sealed.count - 1] {
            var flipped = sealed
            flipped[index] ^= 1
            candidates.append(Base64URL.encode(flipped))
        }
        sealed.removeLast()
        candidates.append(Base64URL.encode(sealed))
        // A seed sealed for storage (another context) is no pending setup either.
        candidates.append(Base64URL.encode(try TOTPSecretSealer(keys: harness.services.sealingKeys).seal(setup.secret, userID: bob.id)))
        for candidate in candidates {
            try assertDatabaseUnchanged("tampered \(candidate.prefix(20))") {
                XCTAssertEqual(confirm(cookie, pending: candidate, code: code).location, "/account?done=totp_expired")
            }
        }
        let missing = post(AccountTOTPResponder.confirmPath, cookie: cookie, fields: [("code", code)])
        XCTAssertEqual(missing.location, "/account?done=totp_expired")
        XCTAssertFalse(try enrolled(bob))
    }

    func testSetupIsRefusedWhileEnrolled() throws {
        let secret = try harness.services.totp.enrol(userID: bob.id)
        let cookie = try sessionCookie(for: bob)
        try assertDatabaseUnchanged("start while enrolled") {
            XCTAssertEqual(post(AccountTOTPResponder.startPath, cookie: cookie).location, "/account?done=totp_already_on")
        }
        XCTAssertEqual(try harness.services.totp.credential(userID: bob.id)?.secret, secret)
    }

    // MARK: Remove

    /// A signed-in browser alone sets up no app: its code would lock the
    /// owner out of a password sign-in.
    func testSetupNeedsTheRightCurrentPassword() throws {
        let cookie = try sessionCookie(for: bob)
        try assertDatabaseUnchanged("setup refused") {
            XCTAssertEqual(post(AccountTOTPResponder.startPath, cookie: cookie).location, "/account?done=password_missing")
            XCTAssertEqual(post(AccountTOTPResponder.startPath, cookie: cookie, fields: [("current", H.password)]).location,
                           "/account?done=totp_start_password_wrong", "alice's password is not bob's")
        }
        XCTAssertTrue(accountPage(cookie, query: "done=totp_start_password_wrong").contains("Two-step sign-in was not set up"))
        XCTAssertEqual(post(AccountTOTPResponder.startPath, cookie: cookie, fields: [("current", H.otherPassword)]).status, 200)
    }

    func testRemoveNeedsTheRightCurrentPassword() throws {
        let secret = try harness.services.totp.enrol(userID: bob.id)
        let cookie = try sessionCookie(for: bob)
        XCTAssertEqual(post(AccountTOTPResponder.removePath, cookie: cookie, fields: [("current", "wrong password")]).location,
                       "/account?done=totp_password_wrong")
        XCTAssertEqual(post(AccountTOTPResponder.removePath, cookie: cookie).location, "/account?done=password_missing")
        XCTAssertEqual(post(AccountTOTPResponder.removePath, cookie: cookie, fields: [("current", H.password)]).location,
                       "/account?done=totp_password_wrong", "alice's password is not bob's")
        XCTAssertEqual(try harness.services.totp.credential(userID: bob.id)?.secret, secret)
        XCTAssertTrue(events(named: "totp_removed").isEmpty)

        XCTAssertEqual(post(AccountTOTPResponder.removePath, cookie: cookie, fields: [("current", H.otherPassword)]).location,
                       "/account?done=totp_off")
        XCTAssertFalse(try enrolled(bob))
        XCTAssertEqual(events(named: "totp_removed").count, 1)
        XCTAssertTrue(accountPage(cookie, query: "done=totp_off").contains("Two-step sign-in is off"))
        // The next sign-in asks for the password only.
        let pending = try harness.startLogin()
        XCTAssertEqual(harness.login(pending, email: bobEmail, password: H.otherPassword).locationBase, H.customSchemeRedirect)
    }

    func testRemoveIsThrottledLikeASignIn() throws {
        _ = try harness.services.totp.enrol(userID: bob.id)
        let cookie = try sessionCookie(for: bob)
        var notices: [String?] = []
        for _ in 0..<5 { notices.append(post(AccountTOTPResponder.removePath, cookie: cookie, fields: [("current", "guess")]).location) }
        XCTAssertEqual(notices, Array(repeating: "/account?done=totp_password_wrong", count: 5))
        XCTAssertEqual(post(AccountTOTPResponder.removePath, cookie: cookie, fields: [("current", H.otherPassword)]).location,
                       "/account?done=password_locked", "locked: the right password is not even checked")
        XCTAssertTrue(try enrolled(bob))
        XCTAssertTrue(try harness.throttle.isAccountLocked(email: bobEmail), "the same lock as /login")
        clock.advance(61)
        XCTAssertEqual(post(AccountTOTPResponder.removePath, cookie: cookie, fields: [("current", H.otherPassword)]).location,
                       "/account?done=totp_off")
        XCTAssertFalse(try enrolled(bob))
    }

    // MARK: Cross-site

    func testCrossSiteAndWrongTokenPostsAreRefused() throws {
        _ = try harness.services.totp.enrol(userID: alice.id)
        let aliceCookie = try sessionCookie(for: alice)
        let bobCookie = try sessionCookie(for: bob)
        let setup = try start(bobCookie)
        let code = harness.code(setup.secret)
        let crossSite: [[String: String]] = [["sec-fetch-site": "cross-site"], ["sec-fetch-site": "same-site"],
                                            ["origin": "https://evil.example"]]
        try assertDatabaseUnchanged("cross-site and wrong-token posts") {
            for headers in crossSite {
                XCTAssertEqual(post(AccountTOTPResponder.startPath, cookie: bobCookie, headers: headers).status, 403, "\(headers)")
                XCTAssertEqual(confirm(bobCookie, pending: setup.pending, code: code, headers: headers).status, 403, "\(headers)")
                XCTAssertEqual(post(AccountTOTPResponder.removePath, cookie: aliceCookie, fields: [("current", H.password)], headers: headers).status,
                               403, "\(headers)")
            }
            for token in ["", "x", AccountFormToken.expected(for: aliceCookie)] {
                XCTAssertEqual(post(AccountTOTPResponder.startPath, cookie: bobCookie, csrf: token).status, 403)
                XCTAssertEqual(post(AccountTOTPResponder.confirmPath, cookie: bobCookie, fields: [("pending", setup.pending), ("code", code)],
                                    csrf: token).status, 403)
                XCTAssertEqual(post(AccountTOTPResponder.removePath, cookie: aliceCookie, fields: [("current", H.password)],
                                    csrf: token == AccountFormToken.expected(for: aliceCookie) ? "y" : token).status, 403)
            }
            let get = harness.run(responder, Request(method: "GET", path: AccountTOTPResponder.startPath,
                                                     headers: H.cookieHeader([SSOSessions.cookieName: bobCookie])))
            XCTAssertEqual(get.status, 405)
        }
        XCTAssertTrue(try enrolled(alice))
        XCTAssertFalse(try enrolled(bob))
    }

    var alice: User { harness.alice }

    func confirm(_ cookie: String, pending: String, code: String, headers: [String: String]) -> Response {
        post(AccountTOTPResponder.confirmPath, cookie: cookie, fields: [("pending", pending), ("code", code)], headers: headers)
    }
}
