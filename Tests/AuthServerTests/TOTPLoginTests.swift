import Foundation
import XCTest
@testable import AuthServer
import IssuerComposition
import IssuerStorage
@testable import IssuerStorageSQLite
import SQLiteClient
import SSOCore

/// Sign-in with a password and a TOTP code (RFC 6238), in-process: the
/// password step's mark, the code step, replay, drift, amr/acr, sealing.
final class TOTPLoginTests: SignInTestCase {
    typealias H = SignInHarness
    let bob = "bob@example.com"

    // MARK: amr and acr

    func testPasswordOnlySignInRecordsAmrPwdOnSessionAndCode() throws {
        let signIn = try harness.signIn()
        let session = try XCTUnwrap(harness.sessions.find(secret: signIn.sessionSecret))
        XCTAssertEqual(session.amr, ["pwd"])
        XCTAssertEqual(session.acr, "urn:gatehouse:pwd")
        let record = try issuer.storage.write {
            try harness.services.codes.redeem(code: signIn.code, clientID: "mobile-app-001", redirectURI: H.customSchemeRedirect,
                                              challengeFromVerifier: H.challenge, issuing: CodeIssue(familyID: "f", jti: "j"), $0)
        }
        XCTAssertEqual(record.amr, ["pwd"])
        XCTAssertEqual(record.acr, "urn:gatehouse:pwd")
    }

    func testRightPasswordOfATOTPUserOnlyMarksThePendingRequest() throws {
        let (user, _) = try harness.addUser(bob, totp: true)
        let pending = try harness.startLogin()
        clock.advance(7)
        let response = harness.login(pending, email: bob, password: H.otherPassword)
        XCTAssertEqual(response.status, 303)
        XCTAssertEqual(response.location, harness.codePage(pending), "the same req token travels on")
        XCTAssertEqual(response.header("Cache-Control"), "no-store")
        XCTAssertTrue(response.setCookieHeaders.isEmpty, "no session yet, gh_login kept")
        XCTAssertEqual(try issuer.count("sso_sessions"), 0)
        XCTAssertEqual(try issuer.count("authorization_codes"), 0)
        let mark = try XCTUnwrap(harness.database.queryOne("SELECT password_verified_user_id, password_verified_at FROM pending_authorizations"))
        XCTAssertEqual(mark.int(0), user.id)
        XCTAssertEqual(mark.int(1), clock.now)
    }

    func testRightCodeCompletesTheSignInWithAmrPwdOtp() throws {
        let (_, secret) = try harness.addUser(bob, totp: true)
        let (pending, response) = try harness.signInWithTOTP(bob, secret: XCTUnwrap(secret))
        XCTAssertEqual(response.status, 303)
        XCTAssertEqual(response.locationBase, H.customSchemeRedirect)
        let query = response.locationQuery
        XCTAssertEqual(query["state"], "state-123")
        XCTAssertEqual(query["iss"], harness.issuerOrigin)
        let code = try XCTUnwrap(query["code"])
        let cookie = try XCTUnwrap(response.cookie("sso_session"))
        XCTAssertTrue(cookie.isHttpOnly && cookie.isSecure)
        XCTAssertEqual(response.cookie("gh_login")?.maxAge, 0)
        XCTAssertEqual(try issuer.count("pending_authorizations"), 0, "the pending request is consumed")
        _ = pending

        let session = try XCTUnwrap(harness.sessions.find(secret: cookie.value))
        XCTAssertEqual(session.amr, ["pwd", "otp"])
        XCTAssertEqual(session.acr, "urn:gatehouse:mfa")
        XCTAssertEqual(try harness.sessionAMR(sid: session.sid), "pwd otp")
        let record = try issuer.storage.write {
            try harness.services.codes.redeem(code: code, clientID: "mobile-app-001", redirectURI: H.customSchemeRedirect,
                                              challengeFromVerifier: H.challenge, issuing: CodeIssue(familyID: "f", jti: "j"), $0)
        }
        XCTAssertEqual(record.amr, ["pwd", "otp"])
        XCTAssertEqual(record.acr, "urn:gatehouse:mfa")
        XCTAssertEqual(record.sid, session.sid)
        XCTAssertEqual(record.userID, try XCTUnwrap(issuer.users.find(email: bob)).id)
    }

    func testTheWholeFlowEndsInTokens() throws {
        let (_, secret) = try harness.addUser(bob, totp: true)
        let (_, response) = try harness.signInWithTOTP(bob, secret: XCTUnwrap(secret))
        let tokens = harness.tokenPOST(H.codeExchange(code: try XCTUnwrap(response.locationQuery["code"])))
        XCTAssertEqual(tokens.status, 200, tokens.bodyText)
        let claims = try harness.verifiedJWT(XCTUnwrap(tokens.jsonObject()["id_token"] as? String)).claims
        XCTAssertEqual(claims["email"] as? String, bob)
        // amr/acr in the ID token are wired by the token issuer from
        // AuthorizationCodeGrantRecord.amr/acr; when present they must be these.
        if let amr = claims["amr"] { XCTAssertEqual(amr as? [String], ["pwd", "otp"]) }
        if let acr = claims["acr"] { XCTAssertEqual(acr as? String, "urn:gatehouse:mfa") }
    }

    // MARK: The code: drift, replay, format

    func testCodesOneStepEitherSideAreAcceptedTwoStepsAreNot() throws {
        let (_, secret) = try harness.addUser(bob, totp: true)
        let seed = try XCTUnwrap(secret)
        for offset: Int64 in [-2, 2, 3, -10] {
            let pending = try harness.startLogin()
            XCTAssertEqual(harness.login(pending, email: bob, password: H.otherPassword).location, harness.codePage(pending))
            try assertDatabaseUnchanged("code \(offset) steps away") {
                XCTAssertEqual(harness.submitCode(pending, harness.code(seed, offset: offset)).location,
                               harness.codePage(pending, error: "invalid_code"), "offset \(offset)")
            }
            let bobID = try XCTUnwrap(issuer.users.find(email: bob)).id
            try issuer.storage.write {
                try harness.throttle.succeeded(LoginAttempt(accountKey: LoginThrottle.accountKey(.user(id: bobID)),
                                                            addressKey: LoginThrottle.addressKey("127.0.0.1")), $0)
            }
        }
        for offset: Int64 in [-1, 0, 1] {
            clock.advance(120)  // a later step each time: no replay involved
            let (_, response) = try harness.signInWithTOTP(bob, secret: seed, offset: offset)
            XCTAssertNotNil(response.locationQuery["code"], "offset \(offset): \(response.location ?? "")")
        }
    }

    func testAUsedCodeIsRefusedAndSoAreEarlierSteps() throws {
        let (user, secret) = try harness.addUser(bob, totp: true)
        let seed = try XCTUnwrap(secret)
        let used = harness.code(seed)
        XCTAssertNotNil(try harness.signInWithTOTP(bob, secret: seed).response.locationQuery["code"])
        let step = TOTP.step(at: clock.now)
        XCTAssertEqual(try harness.totpStore.credential(userID: user.id)?.lastUsedStep, step)

        for (name, code) in [("the same code again", used), ("the previous step's code", harness.code(seed, offset: -1))] {
            let pending = try harness.startLogin()
            XCTAssertEqual(harness.login(pending, email: bob, password: H.otherPassword).location, harness.codePage(pending))
            try assertDatabaseUnchanged(name) {
                XCTAssertEqual(harness.submitCode(pending, code).location, harness.codePage(pending, error: "invalid_code"), name)
            }
        }
        // The next step's code works once the clock gets there.
        clock.advance(TOTP.period)
        let pending = try harness.startLogin()
        _ = harness.login(pending, email: bob, password: H.otherPassword)
        XCTAssertNotNil(harness.submitCode(pending, harness.code(seed)).locationQuery["code"])
    }

    func testMalformedCodesAreRefusedUncountedAndChangeNothing() throws {
        let (_, secret) = try harness.addUser(bob, totp: true)
        let pending = try harness.startLogin()
        _ = harness.login(pending, email: bob, password: H.otherPassword)
        let throttleBefore = try harness.throttleRows()
        let right = harness.code(try XCTUnwrap(secret))
        for otp in ["", "12345", "1234567", "abcdef", " " + right, right + " ", "１２３４５６", "12 456", "-12345", "+12345",
                    right + right] {
            try assertDatabaseUnchanged("otp \(otp.debugDescription)") {
                let response = harness.submitCode(pending, otp)
                XCTAssertEqual(response.location, harness.codePage(pending, error: "invalid_code"), otp.debugDescription)
                XCTAssertNil(response.cookie("sso_session"))
            }
        }
        XCTAssertEqual(try harness.throttleRows(), throttleBefore, "malformed codes are not guesses")
        try assertDatabaseUnchanged("repeated otp") {
            XCTAssertEqual(harness.submitCode(pending, right, extra: [("otp", right)]).location, harness.codePage(pending, error: "invalid_code"))
        }
        XCTAssertNotNil(harness.submitCode(pending, right).locationQuery["code"], "the right code still completes")
    }

    // MARK: The password step's mark

    func testCodeStepWithoutAPasswordStepIsExpiredAndChangesNothing() throws {
        let (_, secret) = try harness.addUser(bob, totp: true)
        let pending = try harness.startLogin()
        try assertDatabaseUnchanged("otp without password") {
            XCTAssertEqual(harness.submitCode(pending, harness.code(try XCTUnwrap(secret))).location,
                           harness.codePage(pending, error: "expired"))
            // Naming the user in the form does not help: the mark decides who signs in.
            XCTAssertEqual(harness.submitCode(pending, harness.code(try XCTUnwrap(secret)), extra: [("email", bob)]).location,
                           harness.codePage(pending, error: "expired"))
        }
        XCTAssertEqual(try issuer.count("sso_sessions"), 0)
    }

    func testTheMarkLastsFiveMinutes() throws {
        let (_, secret) = try harness.addUser(bob, totp: true)
        let seed = try XCTUnwrap(secret)
        let pending = try harness.startLogin()
        _ = harness.login(pending, email: bob, password: H.otherPassword)
        clock.advance(PasswordVerifiedMarks.lifetime)
        XCTAssertEqual(harness.submitCode(pending, harness.code(seed)).location, harness.codePage(pending, error: "expired"))
        XCTAssertEqual(try issuer.count("sso_sessions"), 0)
        // The password step again renews it; the same pending request completes.
        XCTAssertEqual(harness.login(pending, email: bob, password: H.otherPassword).location, harness.codePage(pending))
        clock.advance(PasswordVerifiedMarks.lifetime - 1)
        XCTAssertNotNil(harness.submitCode(pending, harness.code(seed)).locationQuery["code"])
    }

    func testTheCodeIsCheckedAgainstTheMarkedUserNotAnother() throws {
        let (_, bobSecret) = try harness.addUser(bob, totp: true)
        let (_, carolSecret) = try harness.addUser("carol@example.com", totp: true)
        let pending = try harness.startLogin()
        _ = harness.login(pending, email: bob, password: H.otherPassword)
        XCTAssertEqual(harness.submitCode(pending, harness.code(try XCTUnwrap(carolSecret)), extra: [("email", "carol@example.com")]).location,
                       harness.codePage(pending, error: "invalid_code"))
        let response = harness.submitCode(pending, harness.code(try XCTUnwrap(bobSecret)))
        let session = try XCTUnwrap(harness.sessions.find(secret: XCTUnwrap(response.cookie("sso_session")).value))
        XCTAssertEqual(session.userID, try XCTUnwrap(issuer.users.find(email: bob)).id)
    }

    func testAnotherBrowsersMarkCannotBeUsed() throws {
        let (_, secret) = try harness.addUser(bob, totp: true)
        let victim = try harness.startLogin()
        _ = harness.login(victim, email: bob, password: H.otherPassword)
        let attacker = try harness.startLogin(H.authorizationParameters(state: "attacker"))
        // The attacker's own cookie with the victim's req: 403; the victim's req is bound to the victim's cookie.
        let forged = PendingLogin(cookieSecret: attacker.cookieSecret, formToken: victim.formToken, response: attacker.response)
        XCTAssertEqual(harness.submitCode(forged, harness.code(try XCTUnwrap(secret))).status, 403)
        XCTAssertEqual(harness.submitCode(attacker, harness.code(try XCTUnwrap(secret))).location, harness.codePage(attacker, error: "expired"))
    }

    func testPasswordChangeOrDisablingBetweenTheStepsVoidsTheMark() throws {
        let (_, secret) = try harness.addUser(bob, totp: true)
        let seed = try XCTUnwrap(secret)
        let pending = try harness.startLogin()
        _ = harness.login(pending, email: bob, password: H.otherPassword)
        try harness.accountChanges.changePassword(email: bob, password: "a brand new password")
        XCTAssertEqual(harness.submitCode(pending, harness.code(seed)).location, harness.codePage(pending, error: "expired"))

        let second = try harness.startLogin()
        XCTAssertEqual(harness.login(second, email: bob, password: "a brand new password").location, harness.codePage(second))
        try harness.accountChanges.disable(email: bob)
        XCTAssertEqual(harness.submitCode(second, harness.code(seed)).location, harness.codePage(second, error: "expired"))
        XCTAssertEqual(try issuer.count("sso_sessions"), 0)
    }

    // MARK: Throttling of codes

    func testWrongCodesCountTowardTheAccountLock() throws {
        let (_, secret) = try harness.addUser(bob, totp: true)
        let seed = try XCTUnwrap(secret)
        let pending = try harness.startLogin()
        _ = harness.login(pending, email: bob, password: H.otherPassword)
        let wrong = String(format: "%06d", (Int(harness.code(seed))! + 500_000) % 1_000_000)
        for attempt in 1...LoginThrottlePolicy.perAccount.maximumFailures {
            XCTAssertEqual(harness.submitCode(pending, wrong).location, harness.codePage(pending, error: "invalid_code"), "attempt \(attempt)")
        }
        try assertDatabaseUnchanged("the right code while locked") {
            XCTAssertEqual(harness.submitCode(pending, harness.code(seed)).location, harness.codePage(pending, error: "too_many_attempts", retryMinutes: 1))
            XCTAssertEqual(harness.login(pending, email: bob, password: H.otherPassword).location,
                           harness.passwordPage(pending, error: "too_many_attempts", retryMinutes: 1, email: bob))
        }
        clock.advance(60)
        XCTAssertNotNil(harness.submitCode(pending, harness.code(seed)).locationQuery["code"])
    }

    /// A right password must not reset the count, or someone who knows the
    /// password could alternate password and code guesses forever.
    func testARightPasswordDoesNotResetTheCodeFailures() throws {
        let (_, secret) = try harness.addUser(bob, totp: true)
        let seed = try XCTUnwrap(secret)
        let wrong = String(format: "%06d", (Int(harness.code(seed))! + 1) % 1_000_000)
        let pending = try harness.startLogin()
        for _ in 1..<LoginThrottlePolicy.perAccount.maximumFailures {
            XCTAssertEqual(harness.login(pending, email: bob, password: H.otherPassword).location, harness.codePage(pending))
            XCTAssertEqual(harness.submitCode(pending, wrong).location, harness.codePage(pending, error: "invalid_code"))
        }
        XCTAssertEqual(harness.login(pending, email: bob, password: H.otherPassword).location, harness.codePage(pending))
        XCTAssertEqual(harness.submitCode(pending, wrong).location, harness.codePage(pending, error: "invalid_code"))
        XCTAssertTrue(try harness.throttle.isAccountLocked(email: bob))
        XCTAssertEqual(harness.login(pending, email: bob, password: H.otherPassword).location,
                       harness.passwordPage(pending, error: "too_many_attempts", retryMinutes: 1, email: bob))
    }

    /// Two browsers post the same valid code at once: one signs in.
    func testConcurrentUsesOfOneCodeSignInOnce() throws {
        let (_, secret) = try harness.addUser(bob, totp: true)
        let code = harness.code(try XCTUnwrap(secret))
        let pendings = try (0..<6).map { _ in try harness.startLogin() }
        for pending in pendings { XCTAssertEqual(harness.login(pending, email: bob, password: H.otherPassword).location, harness.codePage(pending)) }
        let responders = try pendings.map { _ in
            try LoginResponder(services: issuer.otherProcess(clock: clock.clock))
        }
        let results = ConcurrentResults()
        DispatchQueue.concurrentPerform(iterations: pendings.count) { index in
            let pending = pendings[index]
            let request = SignInHarness.formRequest("/login", RequestParameters([("req", pending.formToken), ("otp", code)]),
                                                    headers: SignInHarness.cookieHeader(["gh_login": pending.cookieSecret]))
            results.append(ResponderOutcome.run(responders[index], request).0)
        }
        let responses = results.all
        XCTAssertEqual(responses.filter { $0.status >= 500 }.count, 0)
        XCTAssertEqual(responses.filter { $0.locationQuery["code"] != nil }.count, 1, responses.map { $0.location ?? "" }.joined(separator: "\n"))
        XCTAssertEqual(try issuer.count("sso_sessions"), 1)
    }

    // MARK: Enrolment and storage

    func testTheSeedIsSealedWithAKeyOutsideTheDatabase() throws {
        let (user, secret) = try harness.addUser(bob, totp: true)
        let seed = try XCTUnwrap(secret)
        let row = try XCTUnwrap(harness.database.queryOne("SELECT sealed_secret FROM totp_credentials WHERE user_id = ?", [.integer(user.id)]))
        XCTAssertEqual(row.bytes(0).count, 12 + 20 + 16, "nonce, sealed seed, tag")
        for suffix in ["", "-wal"] {
            guard let data = FileManager.default.contents(atPath: issuer.config.databasePath + suffix) else { continue }
            XCTAssertNil(data.range(of: Data(seed)), "seed in the raw database\(suffix)")
            XCTAssertNil(data.range(of: Data(Base32.encode(seed).utf8)), "base32 seed in the raw database\(suffix)")
        }
        let keyPath = SealingKeyFiles(keysDirectory: issuer.config.keysDirectory).path(.totp)
        let attributes = try FileManager.default.attributesOfItem(atPath: keyPath)
        XCTAssertEqual((attributes[.posixPermissions] as? NSNumber)?.intValue, 0o600)
        XCTAssertEqual(try harness.totpStore.credential(userID: user.id)?.secret, seed, "a fresh process opens it")
        // A sealed seed copied to another user's row does not open there.
        let (carol, _) = try harness.addUser("carol@example.com", totp: true)
        try harness.database.execute("UPDATE totp_credentials SET sealed_secret = ? WHERE user_id = ?", [.blob(row.bytes(0)), .integer(carol.id)])
        XCTAssertThrowsError(try harness.totpStore.credential(userID: carol.id))
    }

    func testReEnrolmentReplacesTheSeed() throws {
        let (user, secret) = try harness.addUser(bob, totp: true)
        let old = try XCTUnwrap(secret)
        let new = try harness.totpStore.enrol(userID: user.id)
        XCTAssertNotEqual(old, new)
        XCTAssertEqual(new.count, 20)
        XCTAssertEqual(try issuer.count("totp_credentials"), 2 - 1)
        let pending = try harness.startLogin()
        _ = harness.login(pending, email: bob, password: H.otherPassword)
        if harness.code(old) != harness.code(new) {
            XCTAssertEqual(harness.submitCode(pending, harness.code(old)).location, harness.codePage(pending, error: "invalid_code"))
        }
        XCTAssertNotNil(harness.submitCode(pending, harness.code(new)).locationQuery["code"])
    }

    func testProvisioningURI() throws {
        let secret = Array("12345678901234567890".utf8)
        XCTAssertEqual(OTPAuthURI.totp(email: "bob@example.com", secret: secret, issuer: "Gatehouse"),
                       "otpauth://totp/Gatehouse:bob@example.com?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=Gatehouse"
                       + "&algorithm=SHA1&digits=6&period=30")
        XCTAssertEqual(OTPAuthURI.totp(email: "bob+x:y@example.com", secret: [0xff], issuer: "Gatehouse"),
                       "otpauth://totp/Gatehouse:bob%2Bx%3Ay@example.com?secret=74&issuer=Gatehouse&algorithm=SHA1&digits=6&period=30")
        // The brand name (GATEHOUSE_BRAND_NAME), escaped per RFC 3986: a space is %20, never "+".
        XCTAssertEqual(OTPAuthURI.totp(email: "bob@example.com", secret: [0xff], issuer: "Acme & Co Ü"),
                       "otpauth://totp/Acme%20%26%20Co%20%C3%9C:bob@example.com?secret=74&issuer=Acme%20%26%20Co%20%C3%9C"
                       + "&algorithm=SHA1&digits=6&period=30")
        // "Neither issuer nor account name may themselves contain a colon": such a name is the issuer parameter only.
        XCTAssertEqual(OTPAuthURI.totp(email: "bob@example.com", secret: [0xff], issuer: "Acme: ID"),
                       "otpauth://totp/bob@example.com?secret=74&issuer=Acme%3A%20ID&algorithm=SHA1&digits=6&period=30")
    }
}

/// Collects results from concurrent closures.
final class ConcurrentResults: @unchecked Sendable {
    private let lock = NSLock()
    private var responses: [Response] = []
    func append(_ response: Response) {
        lock.lock()
        responses.append(response)
        lock.unlock()
    }
    var all: [Response] {
        lock.lock()
        defer { lock.unlock() }
        return responses
    }
}
