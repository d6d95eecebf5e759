import Foundation
import XCTest
@testable import AuthServer
import IssuerComposition
import IssuerStorage
@testable import IssuerStorageSQLite
import SQLiteClient
import SSOCore

/// Passkeys at the issuer, in-process: PasskeyCeremonies (options, the
/// challenge's binding, single use and lifetime, registration, sign-in,
/// amr) and the responders that run them (`/account` and its passkey
/// posts, the login page's `/login/passkey/options` and `/login/passkey`),
/// with real WebAuthn responses signed by ES256 keys made here.
final class PasskeyCeremoniesTests: SignInTestCase {
    typealias H = SignInHarness
    static let bobPassword = "bobs password 1"

    var account: AccountResponder!
    var bob: User!

    override func setUpWithError() throws {
        try super.setUpWithError()
        account = AccountResponder(services: harness.services)
        bob = try issuer.users.add(email: "bob@example.com", name: "Bob", password: Self.bobPassword)
        AuditLog.recorded = []
    }

    override func tearDown() {
        AuditLog.recorded = nil
        super.tearDown()
    }

    // MARK: Helpers

    var ceremonies: PasskeyCeremonies { harness.services.passkeys }
    var alice: User { harness.alice }
    var origin: String { harness.issuerOrigin }
    /// The issuer's host, found here independently of PasskeyCeremonies.host.
    var issuerHost: String { URLComponents(string: harness.issuerOrigin)!.host! }
    var events: [AuditEvent] { AuditLog.recorded ?? [] }
    func events(named name: String) -> [AuditEvent] { events.filter { $0.event == name } }
    var refusedCount: UInt64 { Metrics.value(.logins, LoginResult.passkeyRefused.rawValue) }

    func passkeys(of user: User) throws -> [PasskeyRecord] { try harness.services.storage.read.passkeys.list(userID: user.id) }
    func passkey(_ authenticator: SoftAuthenticator) throws -> PasskeyRecord? {
        try harness.services.storage.read.passkeys.find(credentialID: authenticator.credentialID)
    }

    /// A live SSO session for `user`, as a sign-in makes one; its cookie value.
    func sessionCookie(for user: User) throws -> String {
        try harness.services.storage.write { tx in
            try harness.services.sessions.create(userID: user.id, lifetime: 3600, tx).secret
        }
    }

    /// A passkey stored directly (no ceremony): for counts and for ids only.
    @discardableResult
    func storeFakePasskey(for user: User, id: [UInt8] = SecureRandom.bytes(16), name: String = "fake") throws -> PasskeyRecord {
        let record = PasskeyRecord(credentialID: id, userID: user.id, publicKeyCOSE: [0xA0], algorithm: -7, signCount: 0, name: name,
                                   aaguid: [UInt8](repeating: 0, count: 16), backupEligible: false, backupState: false,
                                   transports: [], createdAt: clock.now)
        XCTAssertTrue(try harness.services.storage.write { try $0.passkeys.add(record) })
        return record
    }

    /// Registration through PasskeyCeremonies alone (no session, no responder).
    @discardableResult
    func enrol(_ authenticator: SoftAuthenticator, for user: User, flags: UInt8 = SoftAuthenticator.registrationFlags,
               name: String? = nil, file: StaticString = #filePath, line: UInt = #line) throws -> PasskeyRecord {
        let binding = SecureRandom.bytes(32)
        let options = try ceremonies.registrationOptions(for: user, binding: binding)
        let created = try authenticator.registration(challenge: options.challenge, rpID: issuerHost, origin: origin, flags: flags)
        return try ceremonies.register(created.response(name: name), for: user, binding: binding)
    }

    // Account responder

    func accountGET(cookie: String?, query: String = "", file: StaticString = #filePath, line: UInt = #line) -> Response {
        let headers = cookie.map { H.cookieHeader([SSOSessions.cookieName: $0]) } ?? [:]
        return harness.run(account, Request(method: "GET", path: AccountResponder.pagePath, query: query, headers: headers), file: file, line: line)
    }

    /// A POST as the account page's script makes it: same-origin, with the
    /// session's form token unless `csrf` is given.
    func accountPOST(_ path: String, cookie: String?, fields: [(String, String)] = [], csrf: String? = nil,
                     headers: [String: String]? = nil, file: StaticString = #filePath, line: UInt = #line) -> Response {
        var pairs = fields
        if let token = csrf ?? cookie.map(AccountFormToken.expected(for:)) { pairs.insert(("csrf", token), at: 0) }
        var allHeaders = headers ?? ["origin": origin, "sec-fetch-site": "same-origin"]
        if let cookie { allHeaders["cookie"] = H.cookieHeader([SSOSessions.cookieName: cookie])["cookie"] }
        return harness.run(account, H.formRequest(path, RequestParameters(pairs), headers: allHeaders), file: file, line: line)
    }

    /// /account/passkeys/options, then /account/passkeys with what the
    /// authenticator made of the challenge.
    func registerViaAccount(_ authenticator: SoftAuthenticator, cookie: String, name: String?,
                            flags: UInt8 = SoftAuthenticator.registrationFlags, transports: String? = "internal,hybrid",
                            file: StaticString = #filePath, line: UInt = #line) throws -> Response {
        let options = accountPOST(AccountResponder.optionsPath, cookie: cookie, fields: [("current", H.password)], file: file, line: line)
        XCTAssertEqual(options.status, 200, options.bodyText, file: file, line: line)
        let challenge = try XCTUnwrap(options.jsonObject(file: file, line: line)["challenge"] as? String, file: file, line: line)
        let created = try authenticator.registration(challenge: challenge, rpID: issuerHost, origin: origin, flags: flags)
        var fields = [("clientDataJSON", Base64URL.encode(created.clientDataJSON)),
                      ("attestationObject", Base64URL.encode(created.attestationObject))]
        if let transports { fields.append(("transports", transports)) }
        if let name { fields.append(("name", name)) }
        return accountPOST(AccountResponder.registerPath, cookie: cookie, fields: fields, file: file, line: line)
    }

    // Login responder

    func loginHeaders(_ pending: PendingLogin) -> [String: String] {
        var headers = H.cookieHeader([PendingAuthorizations.cookieName: pending.cookieSecret])
        headers["origin"] = origin
        headers["sec-fetch-site"] = "same-origin"
        return headers
    }

    /// POST /login/passkey/options for this pending request: the options' JSON.
    func loginOptions(_ pending: PendingLogin, file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
        let response = harness.run(harness.login, H.formRequest(LoginResponder.passkeyOptionsPath, RequestParameters([("req", pending.formToken)]),
                                                                headers: loginHeaders(pending)), file: file, line: line)
        XCTAssertEqual(response.status, 200, response.bodyText, file: file, line: line)
        XCTAssertEqual(response.header("Cache-Control"), "no-store", file: file, line: line)
        return response.jsonObject(file: file, line: line)
    }

    func loginChallenge(_ pending: PendingLogin, file: StaticString = #filePath, line: UInt = #line) throws -> String {
        try XCTUnwrap(loginOptions(pending, file: file, line: line)["challenge"] as? String, file: file, line: line)
    }

    /// POST /login/passkey with an assertion, as the login page's script does.
    func postAssertion(_ pending: PendingLogin, _ assertion: SoftAssertion, file: StaticString = #filePath, line: UInt = #line) -> Response {
        harness.run(harness.login, H.formRequest(LoginResponder.passkeyPath, RequestParameters([("req", pending.formToken)] + assertion.formFields),
                                                 headers: loginHeaders(pending)), file: file, line: line)
    }

    /// A fresh challenge for `pending`, answered by `authenticator`: must sign in.
    @discardableResult
    func assertSignsIn(_ pending: PendingLogin, _ authenticator: SoftAuthenticator, user: User, signCount: UInt32,
                       flags: UInt8 = SoftAuthenticator.assertionFlags, file: StaticString = #filePath, line: UInt = #line) throws -> Response {
        let challenge = try loginChallenge(pending, file: file, line: line)
        let assertion = try authenticator.assertion(challenge: challenge, rpID: issuerHost, origin: origin, flags: flags, signCount: signCount,
                                                    userHandle: PasskeyCeremonies.userHandle(user))
        let response = postAssertion(pending, assertion, file: file, line: line)
        XCTAssertEqual(response.status, 200, "the same passkey signs in with a good assertion: \(response.bodyText)", file: file, line: line)
        XCTAssertNotNil(response.cookie(SSOSessions.cookieName), file: file, line: line)
        return response
    }

    /// The refusal every bad assertion gets: 400 passkey_refused, counted
    /// once, no session or code, the pending request kept, and the passkey's
    /// use (counter, last use) not recorded.
    /// `because`: what the log line names (PasskeyRefusal's reason, and the
    /// WebAuthn check), so each refusal is shown to be the one meant.
    func assertRefused(_ pending: PendingLogin, _ assertion: SoftAssertion, _ what: String, because: String, credential: [UInt8]? = nil,
                       file: StaticString = #filePath, line: UInt = #line) throws {
        let credentialID = credential ?? assertion.credentialID
        let storedBefore = try harness.services.storage.read.passkeys.find(credentialID: credentialID)
        let sessionsBefore = try issuer.count("sso_sessions"), codesBefore = try issuer.count("authorization_codes")
        let refusedBefore = refusedCount
        let failuresBefore = events(named: "login_failure").count, successesBefore = events(named: "login_success").count
        let response = postAssertion(pending, assertion, file: file, line: line)
        XCTAssertEqual(response.status, 400, "\(what): \(response.bodyText)", file: file, line: line)
        XCTAssertTrue(response.logDetail?.hasPrefix("passkey sign-in refused: " + because) ?? false,
                      "\(what): refused for \(response.logDetail ?? "nil"), expected \(because)", file: file, line: line)
        XCTAssertEqual(response.header("Content-Type"), "application/json", what, file: file, line: line)
        XCTAssertEqual(response.header("Cache-Control"), "no-store", what, file: file, line: line)
        XCTAssertEqual(response.jsonObject(file: file, line: line)["error"] as? String, "passkey_refused", what, file: file, line: line)
        XCTAssertTrue(response.setCookieHeaders.isEmpty, "\(what): no cookie set or cleared", file: file, line: line)
        XCTAssertNil(response.location, what, file: file, line: line)
        XCTAssertEqual(refusedCount, refusedBefore + 1, "\(what): counted once as passkey_refused", file: file, line: line)
        XCTAssertEqual(try issuer.count("sso_sessions"), sessionsBefore, "\(what): no session", file: file, line: line)
        XCTAssertEqual(try issuer.count("authorization_codes"), codesBefore, "\(what): no code", file: file, line: line)
        XCTAssertNotNil(try harness.services.pendingAuthorizations.find(cookieSecret: pending.cookieSecret),
                        "\(what): the pending request is kept", file: file, line: line)
        XCTAssertEqual(try harness.services.storage.read.passkeys.find(credentialID: credentialID), storedBefore,
                       "\(what): no use recorded", file: file, line: line)
        XCTAssertEqual(events(named: "login_success").count, successesBefore, "\(what): no login_success", file: file, line: line)
        let failures = events(named: "login_failure")
        XCTAssertEqual(failures.count, failuresBefore + 1, what, file: file, line: line)
        XCTAssertEqual(failures.last?.reason, "passkey_refused", what, file: file, line: line)
    }

    func assertJSONError(_ response: Response, _ status: Int, _ error: String, _ what: String = "",
                         file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(response.status, status, "\(what): \(response.bodyText)", file: file, line: line)
        XCTAssertEqual(response.header("Content-Type"), "application/json", what, file: file, line: line)
        XCTAssertEqual(response.jsonObject(file: file, line: line)["error"] as? String, error, what, file: file, line: line)
    }

    func assertRefusal(_ reason: PasskeyRefusal.Reason, _ what: String = "", file: StaticString = #filePath, line: UInt = #line,
                       _ body: () throws -> Void) {
        XCTAssertThrowsError(try body(), "\(what): expected \(reason)", file: file, line: line) { error in
            XCTAssertEqual((error as? PasskeyRefusal)?.reason, reason, "\(what): \(error)", file: file, line: line)
        }
    }

    // MARK: Registration options

    func testRegistrationOptionsNameTheIssuerAndTheSubjectAndRequireADiscoverableVerifiedCredential() throws {
        let options = try ceremonies.registrationOptions(for: alice, binding: SecureRandom.bytes(32))
        XCTAssertEqual(options.rp.id, issuerHost, "the RP ID is the issuer's host")
        XCTAssertEqual(options.rp.name, "Gatehouse")
        XCTAssertEqual(options.user.id, Base64URL.encode(Array(alice.subject.utf8)), "user.id is the OIDC subject")
        XCTAssertNotEqual(options.user.id, Base64URL.encode(Array(alice.email.utf8)), "never the email")
        XCTAssertFalse(String(decoding: Base64URL.decode(options.user.id) ?? [], as: UTF8.self).contains("@"))
        XCTAssertEqual(options.user.name, alice.email)
        XCTAssertEqual(options.user.displayName, alice.name)
        XCTAssertEqual(options.authenticatorSelection.residentKey, "required")
        XCTAssertTrue(options.authenticatorSelection.requireResidentKey)
        XCTAssertEqual(options.authenticatorSelection.userVerification, "required")
        XCTAssertEqual(options.attestation, "none")
        XCTAssertEqual(options.pubKeyCredParams.map(\.alg), [-7, -8, -257])
        XCTAssertEqual(options.timeout, PasskeyCeremonies.challengeLifetime * 1000)
        XCTAssertEqual(Base64URL.decode(options.challenge)?.count, 32)
        XCTAssertEqual(options.excludeCredentials, [])

        // The user's passkeys are excluded; another user's are not.
        let first = try SoftAuthenticator(), second = try SoftAuthenticator()
        try enrol(first, for: alice)
        try enrol(second, for: alice)
        try storeFakePasskey(for: bob)
        let again = try ceremonies.registrationOptions(for: alice, binding: SecureRandom.bytes(32))
        XCTAssertEqual(Set(again.excludeCredentials.map(\.id)), [Base64URL.encode(first.credentialID), Base64URL.encode(second.credentialID)])
        XCTAssertEqual(again.excludeCredentials.map(\.type), ["public-key", "public-key"])
        XCTAssertNotEqual(again.challenge, options.challenge, "a challenge of its own each time")
        XCTAssertEqual(Base64URL.decode(try ceremonies.registrationOptions(for: bob, binding: []).user.id), Array(bob.subject.utf8))
    }

    /// WebAuthn §5.4.1 rp.name is what the passkey dialog shows: the brand.
    func testTheRelyingPartyNameIsTheBrandName() throws {
        let config = try GatehouseConfig(home: issuer.home, values: ["GATEHOUSE_BRAND_NAME": "Acme ID"])
        let branded = IssuerServices(settings: IssuerSettings(config: config), storage: issuer.storage,
                                     sealingKeys: issuer.services.sealingKeys, hasher: TemporaryIssuer.fastHasher)
        XCTAssertEqual(try branded.passkeys.registrationOptions(for: alice, binding: SecureRandom.bytes(32)).rp.name, "Acme ID")
    }

    func testAccountOptionsEndpointAnswersTheSameOptionsAsJSON() throws {
        let cookie = try sessionCookie(for: alice)
        let existing = try SoftAuthenticator()
        try enrol(existing, for: alice)
        let response = accountPOST(AccountResponder.optionsPath, cookie: cookie, fields: [("current", H.password)])
        XCTAssertEqual(response.status, 200, response.bodyText)
        XCTAssertEqual(response.header("Content-Type"), "application/json")
        XCTAssertEqual(response.header("Cache-Control"), "no-store")
        let json = response.jsonObject()
        let rp = try XCTUnwrap(json["rp"] as? [String: Any])
        XCTAssertEqual(rp["id"] as? String, issuerHost)
        let user = try XCTUnwrap(json["user"] as? [String: Any])
        XCTAssertEqual(user["id"] as? String, Base64URL.encode(Array(alice.subject.utf8)))
        XCTAssertNotEqual(user["id"] as? String, Base64URL.encode(Array(alice.email.utf8)))
        let selection = try XCTUnwrap(json["authenticatorSelection"] as? [String: Any])
        XCTAssertEqual(selection["residentKey"] as? String, "required")
        XCTAssertEqual(selection["requireResidentKey"] as? Bool, true)
        XCTAssertEqual(selection["userVerification"] as? String, "required")
        XCTAssertEqual(json["attestation"] as? String, "none")
        let excluded = try XCTUnwrap(json["excludeCredentials"] as? [[String: Any]])
        XCTAssertEqual(excluded.compactMap { $0["id"] as? String }, [Base64URL.encode(existing.credentialID)])
        XCTAssertEqual(Base64URL.decode(try XCTUnwrap(json["challenge"] as? String))?.count, 32)
    }

    func testTheTwentyFirstPasskeyIsRefused() throws {
        for index in 0..<PasskeyCeremonies.maximumPerUser { try storeFakePasskey(for: alice, name: "key \(index)") }
        XCTAssertEqual(PasskeyCeremonies.maximumPerUser, 20)
        let challengesBefore = try issuer.count("webauthn_challenges")
        assertRefusal(.limit, "21st through the ceremonies") { _ = try ceremonies.registrationOptions(for: alice, binding: SecureRandom.bytes(32)) }

        let cookie = try sessionCookie(for: alice)
        assertJSONError(accountPOST(AccountResponder.optionsPath, cookie: cookie, fields: [("current", H.password)]), 400, "passkey_refused",
                        "21st through /account")
        XCTAssertEqual(try issuer.count("webauthn_challenges"), challengesBefore, "no challenge issued when refused")
        XCTAssertEqual(try passkeys(of: alice).count, 20)

        // Another user is not limited by Alice's; with one removed, Alice may add again.
        XCTAssertNoThrow(try ceremonies.registrationOptions(for: bob, binding: SecureRandom.bytes(32)))
        let first = try XCTUnwrap(passkeys(of: alice).first)
        XCTAssertTrue(try harness.services.storage.write { try $0.passkeys.remove(credentialID: first.credentialID, userID: alice.id) })
        let twentieth = try SoftAuthenticator()
        XCTAssertEqual(try registerViaAccount(twentieth, cookie: cookie, name: "twentieth").status, 200)
        XCTAssertEqual(try passkeys(of: alice).count, 20)
        assertJSONError(accountPOST(AccountResponder.optionsPath, cookie: cookie, fields: [("current", H.password)]), 400, "passkey_refused",
                        "21st again")
    }

    /// The limit is checked when the options are asked for; a challenge
    /// asked for while the account held 19 must not add a 21st.
    func testAChallengeHeldFromBeforeTheTwentiethCannotAddATwentyFirst() throws {
        for index in 0..<(PasskeyCeremonies.maximumPerUser - 1) { try storeFakePasskey(for: alice, name: "key \(index)") }
        let binding = SecureRandom.bytes(32)
        let firstOptions = try ceremonies.registrationOptions(for: alice, binding: binding)
        let secondOptions = try ceremonies.registrationOptions(for: alice, binding: binding)
        let twentieth = try SoftAuthenticator(), twentyFirst = try SoftAuthenticator()
        _ = try ceremonies.register(twentieth.registration(challenge: firstOptions.challenge, rpID: issuerHost, origin: origin).response(name: "20"),
                                    for: alice, binding: binding)
        XCTAssertEqual(try passkeys(of: alice).count, 20)
        assertRefusal(.limit, "a challenge issued at 19 passkeys must not add a 21st (register counts again)") {
            _ = try ceremonies.register(twentyFirst.registration(challenge: secondOptions.challenge, rpID: issuerHost, origin: origin)
                .response(name: "21"), for: alice, binding: binding)
        }
        XCTAssertEqual(try passkeys(of: alice).count, 20, "the account holds more than PasskeyCeremonies.maximumPerUser passkeys")
    }

    // MARK: Registration

    func testRegistrationChallengeIsBoundToItsSessionUserAndPurpose() throws {
        let authenticator = try SoftAuthenticator()
        let binding = SecureRandom.bytes(32)
        let options = try ceremonies.registrationOptions(for: alice, binding: binding)
        let created = try authenticator.registration(challenge: options.challenge, rpID: issuerHost, origin: origin)
        assertRefusal(.challenge, "another session's binding") {
            _ = try ceremonies.register(created.response(name: nil), for: alice, binding: SecureRandom.bytes(32))
        }
        assertRefusal(.challenge, "another user") { _ = try ceremonies.register(created.response(name: nil), for: bob, binding: binding) }
        // A sign-in challenge does not register.
        let signIn = try ceremonies.authenticationOptions(binding: binding)
        assertRefusal(.challenge, "an authentication challenge") {
            _ = try ceremonies.register(authenticator.registration(challenge: signIn.challenge, rpID: issuerHost, origin: origin).response(name: nil),
                                        for: alice, binding: binding)
        }
        XCTAssertEqual(try passkeys(of: alice), [])
        XCTAssertEqual(try passkeys(of: bob), [])
        // Used once.
        let fresh = try ceremonies.registrationOptions(for: alice, binding: binding)
        let good = try authenticator.registration(challenge: fresh.challenge, rpID: issuerHost, origin: origin)
        XCTAssertNoThrow(try ceremonies.register(good.response(name: nil), for: alice, binding: binding))
        let other = try SoftAuthenticator()
        assertRefusal(.challenge, "the challenge again") {
            _ = try ceremonies.register(other.registration(challenge: fresh.challenge, rpID: issuerHost, origin: origin).response(name: nil),
                                        for: alice, binding: binding)
        }
        // The same credential twice: refused as a duplicate, even for another user.
        let options2 = try ceremonies.registrationOptions(for: bob, binding: binding)
        assertRefusal(.duplicate, "an already registered credential") {
            _ = try ceremonies.register(authenticator.registration(challenge: options2.challenge, rpID: issuerHost, origin: origin)
                .response(name: nil), for: bob, binding: binding)
        }
        XCTAssertEqual(try passkeys(of: alice).count, 1)
        XCTAssertEqual(try passkeys(of: bob), [])
    }

    func testNamesAreTrimmedDefaultedAndLimited() throws {
        XCTAssertEqual(try enrol(SoftAuthenticator(), for: alice, name: "  My phone \t").name, "My phone")
        XCTAssertEqual(try enrol(SoftAuthenticator(), for: alice, name: "").name, "Passkey")
        XCTAssertEqual(try enrol(SoftAuthenticator(), for: alice, name: "   ").name, "Passkey")
        XCTAssertEqual(try enrol(SoftAuthenticator(), for: alice, name: nil).name, "Passkey")
        XCTAssertEqual(try enrol(SoftAuthenticator(), for: alice, name: String(repeating: "a", count: 64)).name.utf8.count, 64)
        XCTAssertEqual(try enrol(SoftAuthenticator(), for: alice, name: String(repeating: "é", count: 32)).name.utf8.count, 64)
        let stored = try passkeys(of: alice).count
        for (what, name) in [("BEL", "bell\u{7}key"), ("NUL", "nul\u{0}key"), ("LF", "two\nlines"), ("DEL", "del\u{7F}"),
                             ("C1", "c1\u{85}key"), ("65 bytes", String(repeating: "a", count: 65)),
                             ("33 two-byte characters", String(repeating: "é", count: 33))] {
            let authenticator = try SoftAuthenticator()
            let binding = SecureRandom.bytes(32)
            let options = try ceremonies.registrationOptions(for: alice, binding: binding)
            let created = try authenticator.registration(challenge: options.challenge, rpID: issuerHost, origin: origin)
            assertRefusal(.malformed, what) { _ = try ceremonies.register(created.response(name: name), for: alice, binding: binding) }
            XCTAssertNil(try passkey(authenticator), "\(what): nothing stored")
            // The refused name did not spend the challenge: the same response with a good name registers.
            XCTAssertEqual(try ceremonies.register(created.response(name: "fine"), for: alice, binding: binding).name, "fine", what)
        }
        XCTAssertEqual(try passkeys(of: alice).count, stored + 7)
    }

    // MARK: Registration and sign-in, end to end

    func testRegistrationThenSignInWithAnES256Passkey() throws {
        let signedIn = try harness.signIn()
        let cookie = signedIn.sessionSecret
        let session = try XCTUnwrap(harness.services.sessions.find(secret: cookie))
        AuditLog.recorded = []
        clock.advance(5)
        let authenticator = try SoftAuthenticator()
        let added = try registerViaAccount(authenticator, cookie: cookie, name: "  My key  ")
        XCTAssertEqual(added.status, 200, added.bodyText)
        XCTAssertEqual(added.header("Cache-Control"), "no-store")
        let addedJSON = added.jsonObject()
        XCTAssertEqual(addedJSON["status"] as? String, "added")
        XCTAssertEqual(addedJSON["name"] as? String, "My key")
        XCTAssertEqual(addedJSON.count, 2)
        let stored = try XCTUnwrap(passkey(authenticator))
        XCTAssertEqual(stored, PasskeyRecord(credentialID: authenticator.credentialID, userID: alice.id, publicKeyCOSE: authenticator.publicKeyCOSE,
                                             algorithm: -7, signCount: 0, name: "My key", aaguid: SoftAuthenticator.aaguid,
                                             backupEligible: false, backupState: false, transports: ["internal", "hybrid"],
                                             createdAt: clock.now, lastUsedAt: nil))
        let addedEvent = try XCTUnwrap(events(named: "passkey_added").first)
        XCTAssertEqual(addedEvent.user, alice.email)
        XCTAssertEqual(addedEvent.reason, "My key")
        XCTAssertEqual(addedEvent.sid, session.sid)
        let page = accountGET(cookie: cookie)
        XCTAssertEqual(page.status, 200)
        XCTAssertTrue(page.bodyText.contains(">My key</strong>"), page.bodyText)
        XCTAssertTrue(page.bodyText.contains("never used"))
        XCTAssertTrue(page.bodyText.contains(Base64URL.encode(authenticator.credentialID)))

        // Sign in with it, in a browser with no session.
        AuditLog.recorded = []
        let pending = try harness.startLogin()
        clock.advance(30)
        let options = try loginOptions(pending)
        XCTAssertEqual(options["rpId"] as? String, issuerHost)
        XCTAssertEqual(options["userVerification"] as? String, "required")
        XCTAssertEqual(options["timeout"] as? Int, 300_000)
        XCTAssertNil(options["allowCredentials"], "discoverable: no allowCredentials")
        let challenge = try XCTUnwrap(options["challenge"] as? String)
        XCTAssertEqual(Base64URL.decode(challenge)?.count, 32)
        let successesBefore = Metrics.value(.logins, LoginResult.success.rawValue)
        let assertion = try authenticator.assertion(challenge: challenge, rpID: issuerHost, origin: origin, signCount: 1,
                                                    userHandle: PasskeyCeremonies.userHandle(alice))
        let response = postAssertion(pending, assertion)
        XCTAssertEqual(response.status, 200, response.bodyText)
        XCTAssertEqual(response.header("Content-Type"), "application/json")
        XCTAssertEqual(response.header("Cache-Control"), "no-store")
        XCTAssertNil(response.location, "JSON, not a redirect: fetch() cannot follow one to a custom scheme")
        let location = try XCTUnwrap(response.jsonObject()["location"] as? String)
        let redirect = Response(status: 303, headers: [("Location", location)])
        XCTAssertEqual(redirect.locationBase, H.customSchemeRedirect)
        let code = try XCTUnwrap(redirect.locationQuery["code"])
        XCTAssertEqual(redirect.locationQuery["state"], "state-123")
        XCTAssertEqual(redirect.locationQuery["iss"], origin)
        let ssoCookie = try XCTUnwrap(response.cookie(SSOSessions.cookieName))
        XCTAssertTrue(ssoCookie.isHttpOnly && ssoCookie.isSecure)
        XCTAssertEqual(response.cookie(PendingAuthorizations.cookieName)?.maxAge, 0, "the pending request's cookie is cleared")
        let method = try XCTUnwrap(response.cookie(InterstitialSignInMethod.cookieName))
        XCTAssertEqual(method.maxAge, 0, "no password was typed: the interstitial says nothing of saving one")
        XCTAssertEqual(method.path, "/mobile/postlogin.html")
        let newSession = try XCTUnwrap(harness.services.sessions.find(secret: ssoCookie.value))
        XCTAssertEqual(newSession.userID, alice.id)
        XCTAssertEqual(newSession.amr, ["hwk", "mfa"])
        XCTAssertEqual(newSession.authTime, clock.now)
        XCTAssertNil(try harness.services.pendingAuthorizations.find(cookieSecret: pending.cookieSecret), "the pending request is consumed")
        // The use is recorded.
        let used = try XCTUnwrap(passkey(authenticator))
        XCTAssertEqual(used.signCount, 1)
        XCTAssertEqual(used.lastUsedAt, clock.now)
        // Audited and counted as a sign-in.
        XCTAssertEqual(Metrics.value(.logins, LoginResult.success.rawValue), successesBefore + 1)
        XCTAssertEqual(events.map(\.event), ["login_success"])
        let success = try XCTUnwrap(events(named: "login_success").first)
        XCTAssertEqual(success.user, alice.email)
        XCTAssertEqual(success.client, "mobile-app-001")
        XCTAssertEqual(success.sid, newSession.sid)
        XCTAssertNil(success.reason)
        // The code carries the passkey's amr into the ID token.
        let tokens = harness.tokenPOST(H.codeExchange(code: code))
        XCTAssertEqual(tokens.status, 200, tokens.bodyText)
        let idToken = try XCTUnwrap(tokens.jsonObject()["id_token"] as? String)
        let claims = try harness.verifiedJWT(idToken).claims
        XCTAssertEqual(claims["amr"] as? [String], ["hwk", "mfa"])
        XCTAssertEqual(claims["sub"] as? String, alice.subject)
        XCTAssertEqual(claims["acr"] as? String, AuthenticationMethods.multiFactorACR)
    }

    func testASyncedPasskeySignsInWithSWK() throws {
        let authenticator = try SoftAuthenticator()
        // BE (and BS) set at registration: the key may leave the device.
        let stored = try enrol(authenticator, for: alice, flags: SoftAuthenticator.registrationFlags | 0x08 | 0x10)
        XCTAssertTrue(stored.backupEligible)
        XCTAssertTrue(stored.backupState)
        XCTAssertEqual(PasskeyCeremonies.authenticationMethods(of: stored), ["swk", "mfa"])
        let pending = try harness.startLogin()
        let response = try assertSignsIn(pending, authenticator, user: alice, signCount: 3, flags: SoftAuthenticator.assertionFlags | 0x08)
        let session = try XCTUnwrap(harness.services.sessions.find(secret: XCTUnwrap(response.cookie(SSOSessions.cookieName)).value))
        XCTAssertEqual(session.amr, ["swk", "mfa"])
        XCTAssertEqual(try passkey(authenticator)?.backupState, false, "BS as last seen")
        // And a device-bound key: hwk.
        let bound = try SoftAuthenticator()
        try enrol(bound, for: bob)
        let second = try assertSignsIn(try harness.startLogin(), bound, user: bob, signCount: 0)
        XCTAssertEqual(try harness.services.sessions.find(secret: XCTUnwrap(second.cookie(SSOSessions.cookieName)).value)?.amr, ["hwk", "mfa"])
    }

    func testAccountNamesAreTrimmedAndDefaulted() throws {
        let cookie = try sessionCookie(for: alice)
        for (given, expected) in [("  Laptop  ", "Laptop"), ("", "Passkey"), ("    ", "Passkey"), (nil, "Passkey"),
                                  (String(repeating: "b", count: 64), String(repeating: "b", count: 64))] as [(String?, String)] {
            let authenticator = try SoftAuthenticator()
            let response = try registerViaAccount(authenticator, cookie: cookie, name: given)
            XCTAssertEqual(response.status, 200, "\(String(describing: given)): \(response.bodyText)")
            XCTAssertEqual(response.jsonObject()["name"] as? String, expected)
            XCTAssertEqual(try passkey(authenticator)?.name, expected)
        }
    }

    func testAccountRefusesANameOver64BytesAndStoresNothing() throws {
        let cookie = try sessionCookie(for: alice)
        for name in [String(repeating: "a", count: 65), String(repeating: "é", count: 33)] {
            let authenticator = try SoftAuthenticator()
            let response = try registerViaAccount(authenticator, cookie: cookie, name: name)
            assertJSONError(response, 400, "passkey_refused", "\(name.utf8.count) bytes")
            XCTAssertNil(try passkey(authenticator), "nothing stored")
        }
        XCTAssertEqual(try passkeys(of: alice), [])
        XCTAssertTrue(events(named: "passkey_added").isEmpty)
    }

    func testAccountRefusesANameWithAControlCharacterAndStoresNothing() throws {
        let cookie = try sessionCookie(for: alice)
        for (what, name) in [("BEL", "bell\u{7}key"), ("LF", "two\nlines"), ("TAB inside", "tab\tinside")] {
            let authenticator = try SoftAuthenticator()
            let response = try registerViaAccount(authenticator, cookie: cookie, name: name)
            XCTAssertEqual(response.status, 400,
                           "a name with a control character (\(what)) must be refused, not stored as \"Passkey\" "
                           + "(found by this test: the name was read with `try? form.single`): \(response.bodyText)")
            let stored = try passkey(authenticator)
            XCTAssertNil(stored?.name, "\(what): a passkey was stored although its name was refused")
        }
        XCTAssertEqual(try passkeys(of: alice).count, 0, "names with control characters stored passkeys (named \"Passkey\")")
    }

    // MARK: Sign-in refusals

    func testAChallengeOfAnotherPendingRequestIsRefused() throws {
        let authenticator = try SoftAuthenticator()
        try enrol(authenticator, for: alice)
        let mine = try harness.startLogin(), theirs = try harness.startLogin(H.authorizationParameters(state: "other"))
        let challenge = try loginChallenge(theirs)
        let assertion = try authenticator.assertion(challenge: challenge, rpID: issuerHost, origin: origin, signCount: 1,
                                                    userHandle: PasskeyCeremonies.userHandle(alice))
        try assertRefused(mine, assertion, "a challenge issued to another pending request",
                          because: "challenge: the challenge was issued to another sign-in or session")
        // Through the ceremonies: another binding is refused for its binding.
        let binding = SecureRandom.bytes(32)
        let options = try ceremonies.authenticationOptions(binding: binding)
        let other = try authenticator.assertion(challenge: options.challenge, rpID: issuerHost, origin: origin, signCount: 1,
                                                userHandle: PasskeyCeremonies.userHandle(alice))
        assertRefusal(.challenge) { _ = try ceremonies.authenticate(other.response, binding: SecureRandom.bytes(32)) }
        // Positive control: this pending request signs in with a challenge of its own.
        try assertSignsIn(mine, authenticator, user: alice, signCount: 1)
    }

    /// Found by review: a signed-in browser alone (or a stolen cookie)
    /// could plant a passkey, which then signs in alone with `amr` mfa.
    // MARK: "Confirm it's you" with a passkey

    /// The confirm options, then the assertion `authenticator` makes of them, posted in `cookie`'s session.
    func confirmWithPasskey(_ authenticator: SoftAuthenticator, as user: User, cookie: String, signCount: UInt32) throws -> Response {
        let options = accountPOST(AccountResponder.confirmPasskeyOptionsPath, cookie: cookie)
        XCTAssertEqual(options.status, 200, options.bodyText)
        let challenge = try XCTUnwrap(options.jsonObject()["challenge"] as? String)
        let assertion = try authenticator.assertion(challenge: challenge, rpID: issuerHost, origin: origin, flags: SoftAuthenticator.assertionFlags,
                                                    signCount: signCount, userHandle: PasskeyCeremonies.userHandle(user))
        return accountPOST(AccountResponder.confirmPasskeyPath, cookie: cookie, fields: assertion.formFields)
    }

    func testAPasskeyOfTheAccountOpensTheConfirmedWindow() throws {
        let authenticator = try SoftAuthenticator()
        try enrol(authenticator, for: bob)
        let cookie = try sessionCookie(for: bob)
        XCTAssertTrue(accountGET(cookie: cookie).bodyText.contains("id=\"confirm-passkey\""), "offered when the account has passkeys")
        let response = try confirmWithPasskey(authenticator, as: bob, cookie: cookie, signCount: 5)
        XCTAssertEqual(response.status, 200, response.bodyText)
        XCTAssertEqual(response.jsonObject()["location"] as? String, "/account?done=confirmed")
        let window = try XCTUnwrap(response.cookie(AccountReauthentication.cookieName)?.value)
        let page = harness.run(account, Request(method: "GET", path: AccountResponder.pagePath,
                                                headers: H.cookieHeader([SSOSessions.cookieName: cookie, AccountReauthentication.cookieName: window])))
        XCTAssertTrue(page.bodyText.contains("id=\"confirmed-window\""))
        XCTAssertEqual(try passkey(authenticator)?.signCount, 5, "the use is recorded")
    }

    func testAnotherAccountsPasskeyOrAnotherSessionsChallengeOpensNothing() throws {
        let alices = try SoftAuthenticator()
        try enrol(alices, for: alice)
        try enrol(try SoftAuthenticator(), for: bob)
        let bobCookie = try sessionCookie(for: bob)
        let before = refusedCount
        let other = try confirmWithPasskey(alices, as: alice, cookie: bobCookie, signCount: 3)
        XCTAssertEqual(other.status, 400, other.bodyText)
        XCTAssertNil(other.cookie(AccountReauthentication.cookieName), "alice's passkey does not confirm bob")
        XCTAssertEqual(refusedCount, before + 1)

        // A challenge made for another session of bob's is refused in this one.
        let bobs = try SoftAuthenticator()
        try enrol(bobs, for: bob)
        let otherCookie = try sessionCookie(for: bob)
        let options = accountPOST(AccountResponder.confirmPasskeyOptionsPath, cookie: otherCookie)
        let challenge = try XCTUnwrap(options.jsonObject()["challenge"] as? String)
        let assertion = try bobs.assertion(challenge: challenge, rpID: issuerHost, origin: origin, flags: SoftAuthenticator.assertionFlags,
                                           signCount: 1, userHandle: PasskeyCeremonies.userHandle(bob))
        let carried = accountPOST(AccountResponder.confirmPasskeyPath, cookie: bobCookie, fields: assertion.formFields)
        XCTAssertEqual(carried.status, 400)
        XCTAssertNil(carried.cookie(AccountReauthentication.cookieName))
    }

    func testAddingAPasskeyTakesTheCurrentPassword() throws {
        let cookie = try sessionCookie(for: alice)
        assertJSONError(accountPOST(AccountResponder.optionsPath, cookie: cookie), 400, "password_missing", "no password")
        assertJSONError(accountPOST(AccountResponder.optionsPath, cookie: cookie, fields: [("current", H.otherPassword)]), 400,
                        "password_wrong", "bob's password is not alice's")
        XCTAssertEqual(try harness.database.queryOne("SELECT count(*) FROM webauthn_challenges")?.int(0), 0, "no challenge was issued")
        XCTAssertEqual(accountPOST(AccountResponder.optionsPath, cookie: cookie, fields: [("current", H.password)]).status, 200)
    }

    func testARegistrationChallengeIsRefusedAtSignIn() throws {
        let authenticator = try SoftAuthenticator()
        try enrol(authenticator, for: alice)
        let cookie = try sessionCookie(for: alice)
        let registration = accountPOST(AccountResponder.optionsPath, cookie: cookie, fields: [("current", H.password)])
        let challenge = try XCTUnwrap(registration.jsonObject()["challenge"] as? String)
        let pending = try harness.startLogin()
        _ = try loginChallenge(pending)
        let assertion = try authenticator.assertion(challenge: challenge, rpID: issuerHost, origin: origin, signCount: 1,
                                                    userHandle: PasskeyCeremonies.userHandle(alice))
        try assertRefused(pending, assertion, "a registration challenge", because: "challenge: the challenge is unknown, used or expired")
        try assertSignsIn(pending, authenticator, user: alice, signCount: 1)
    }

    func testAChallengeIsUsedOnce() throws {
        let authenticator = try SoftAuthenticator()
        try enrol(authenticator, for: alice)
        // Through the ceremonies: the second use of one challenge is refused, whatever its counter.
        let binding = SecureRandom.bytes(32)
        let options = try ceremonies.authenticationOptions(binding: binding)
        let handle = PasskeyCeremonies.userHandle(alice)
        let first = try authenticator.assertion(challenge: options.challenge, rpID: issuerHost, origin: origin, signCount: 1, userHandle: handle)
        XCTAssertEqual(try ceremonies.authenticate(first.response, binding: binding).0.id, alice.id)
        let second = try authenticator.assertion(challenge: options.challenge, rpID: issuerHost, origin: origin, signCount: 2, userHandle: handle)
        assertRefusal(.challenge, "the challenge again") { _ = try ceremonies.authenticate(second.response, binding: binding) }
        XCTAssertEqual(try passkey(authenticator)?.signCount, 1)

        // Through /login/passkey: a challenge of this pending request that was already used.
        let pending = try harness.startLogin()
        let challenge = try loginChallenge(pending)
        let step = LoginStep(cookieSecret: pending.cookieSecret, formToken: pending.formToken, address: "127.0.0.1",
                                            clientID: "mobile-app-001")
        let used = try authenticator.assertion(challenge: challenge, rpID: issuerHost, origin: origin, signCount: 5, userHandle: handle)
        XCTAssertEqual(try ceremonies.authenticate(used.response, binding: PasskeySignIn.binding(step)).0.id, alice.id,
                       "the first use, by this pending request's binding")
        let again = try authenticator.assertion(challenge: challenge, rpID: issuerHost, origin: origin, signCount: 6, userHandle: handle)
        try assertRefused(pending, again, "the same challenge twice", because: "challenge: the challenge is unknown, used or expired")
        try assertSignsIn(pending, authenticator, user: alice, signCount: 6)
    }

    func testAnExpiredChallengeIsRefused() throws {
        let authenticator = try SoftAuthenticator()
        try enrol(authenticator, for: alice)
        let pending = try harness.startLogin()
        let challenge = try loginChallenge(pending)
        clock.advance(Int64(PasskeyCeremonies.challengeLifetime) + 1)
        let assertion = try authenticator.assertion(challenge: challenge, rpID: issuerHost, origin: origin, signCount: 1,
                                                    userHandle: PasskeyCeremonies.userHandle(alice))
        try assertRefused(pending, assertion, "a challenge 301 s old", because: "challenge: the challenge is unknown, used or expired")
        // At exactly 300 s it has expired too.
        let other = try harness.startLogin()
        let atLimit = try loginChallenge(other)
        clock.advance(Int64(PasskeyCeremonies.challengeLifetime))
        try assertRefused(other, authenticator.assertion(challenge: atLimit, rpID: issuerHost, origin: origin, signCount: 1,
                                                         userHandle: PasskeyCeremonies.userHandle(alice)), "a challenge 300 s old",
                          because: "challenge: the challenge is unknown, used or expired")
        // A challenge 299 s old still signs in (the pending request lives 600 s).
        let late = try harness.startLogin()
        let fresh = try loginChallenge(late)
        clock.advance(Int64(PasskeyCeremonies.challengeLifetime) - 1)
        let answer = try authenticator.assertion(challenge: fresh, rpID: issuerHost, origin: origin, signCount: 1,
                                                 userHandle: PasskeyCeremonies.userHandle(alice))
        XCTAssertEqual(postAssertion(late, answer).status, 200)
    }

    func testAnotherUsersUserHandleIsRefused() throws {
        let authenticator = try SoftAuthenticator()
        try enrol(authenticator, for: alice)
        let pending = try harness.startLogin()
        let challenge = try loginChallenge(pending)
        let assertion = try authenticator.assertion(challenge: challenge, rpID: issuerHost, origin: origin, signCount: 1,
                                                    userHandle: PasskeyCeremonies.userHandle(bob))
        try assertRefused(pending, assertion, "Bob's user handle on Alice's passkey", because: "verification: userHandleMismatch")
        try assertSignsIn(pending, authenticator, user: alice, signCount: 1)
    }

    func testADisabledUsersPasskeyIsRefused() throws {
        let authenticator = try SoftAuthenticator()
        try enrol(authenticator, for: bob)
        try assertSignsIn(try harness.startLogin(), authenticator, user: bob, signCount: 1)
        try issuer.users.disable(email: bob.email)
        AuditLog.recorded = []
        let pending = try harness.startLogin()
        let challenge = try loginChallenge(pending)
        let assertion = try authenticator.assertion(challenge: challenge, rpID: issuerHost, origin: origin, signCount: 2,
                                                    userHandle: PasskeyCeremonies.userHandle(bob))
        try assertRefused(pending, assertion, "a disabled user's passkey", because: "unknownCredential:")
        let options = try ceremonies.authenticationOptions(binding: [1])
        let direct = try authenticator.assertion(challenge: options.challenge, rpID: issuerHost, origin: origin, signCount: 2,
                                                 userHandle: PasskeyCeremonies.userHandle(bob))
        assertRefusal(.unknownCredential) { _ = try ceremonies.authenticate(direct.response, binding: [1]) }
    }

    func testAPasskeyRemovedOnTheAccountPageIsRefused() throws {
        let cookie = try sessionCookie(for: alice)
        let authenticator = try SoftAuthenticator(), kept = try SoftAuthenticator()
        XCTAssertEqual(try registerViaAccount(authenticator, cookie: cookie, name: "to remove").status, 200)
        XCTAssertEqual(try registerViaAccount(kept, cookie: cookie, name: "kept").status, 200)
        let removed = accountPOST(AccountResponder.removePath, cookie: cookie, fields: [("id", Base64URL.encode(authenticator.credentialID))])
        XCTAssertEqual(removed.status, 303)
        XCTAssertEqual(removed.location, "/account?done=removed")
        XCTAssertNil(try passkey(authenticator))
        XCTAssertNotNil(try passkey(kept))
        XCTAssertEqual(events(named: "passkey_removed").map(\.user), [alice.email])
        XCTAssertTrue(accountGET(cookie: cookie, query: "done=removed").bodyText.contains("The passkey was removed."))

        let pending = try harness.startLogin()
        let challenge = try loginChallenge(pending)
        let assertion = try authenticator.assertion(challenge: challenge, rpID: issuerHost, origin: origin, signCount: 1,
                                                    userHandle: PasskeyCeremonies.userHandle(alice))
        try assertRefused(pending, assertion, "a removed passkey", because: "unknownCredential:")
        try assertSignsIn(pending, kept, user: alice, signCount: 1)
    }

    func testASignatureCounterThatDidNotIncreaseIsRefused() throws {
        let authenticator = try SoftAuthenticator()
        try enrol(authenticator, for: alice)
        try assertSignsIn(try harness.startLogin(), authenticator, user: alice, signCount: 5)
        XCTAssertEqual(try passkey(authenticator)?.signCount, 5)
        let pending = try harness.startLogin()
        for count: UInt32 in [5, 4, 0] {
            let challenge = try loginChallenge(pending)
            let assertion = try authenticator.assertion(challenge: challenge, rpID: issuerHost, origin: origin, signCount: count,
                                                        userHandle: PasskeyCeremonies.userHandle(alice))
            try assertRefused(pending, assertion, "counter \(count) after 5", because: "verification: signCountNotIncreased")
        }
        XCTAssertEqual(try passkey(authenticator)?.signCount, 5)
        try assertSignsIn(pending, authenticator, user: alice, signCount: 6)
        XCTAssertEqual(try passkey(authenticator)?.signCount, 6)
    }

    func testATamperedSignatureIsRefused() throws {
        let authenticator = try SoftAuthenticator(), other = try SoftAuthenticator()
        try enrol(authenticator, for: alice)
        let pending = try harness.startLogin()
        let handle = PasskeyCeremonies.userHandle(alice)

        var flipped = try authenticator.assertion(challenge: loginChallenge(pending), rpID: issuerHost, origin: origin, signCount: 1, userHandle: handle)
        flipped.signature[flipped.signature.count - 1] ^= 0x01
        try assertRefused(pending, flipped, "a signature with one bit flipped", because: "verification: badSignature")

        var raisedCounter = try authenticator.assertion(challenge: loginChallenge(pending), rpID: issuerHost, origin: origin, signCount: 1,
                                                        userHandle: handle)
        raisedCounter.authenticatorData[36] = 9  // signed with counter 1, sent with 9
        try assertRefused(pending, raisedCounter, "authenticator data changed after signing", because: "verification: badSignature")

        var anotherKey = try other.assertion(challenge: loginChallenge(pending), rpID: issuerHost, origin: origin, signCount: 1, userHandle: handle)
        anotherKey.credentialID = authenticator.credentialID
        try assertRefused(pending, anotherKey, "signed by another key", because: "verification: badSignature")

        try assertSignsIn(pending, authenticator, user: alice, signCount: 1)
    }

    // MARK: /account

    func testAccountWithoutASessionSendsTheBrowserToSignInAndRefusesPosts() throws {
        let ended = try sessionCookie(for: alice)
        try harness.endSession(XCTUnwrap(harness.services.sessions.find(secret: ended)).sid)
        for (what, cookie) in [("no cookie", nil), ("unknown cookie", SecureRandom.token()), ("ended session", ended)] as [(String, String?)] {
            let page = accountGET(cookie: cookie)
            XCTAssertTrue(page.sendsToAccountSignIn, what)
            XCTAssertFalse(page.bodyText.contains(alice.email), what)
            XCTAssertEqual(page.header("Cache-Control"), "no-store", what)
            let challengesBefore = try issuer.count("webauthn_challenges")
            for path in [AccountResponder.optionsPath, AccountResponder.registerPath, AccountResponder.removePath] {
                let response = accountPOST(path, cookie: cookie, fields: [("id", "AAAA")], csrf: cookie.map(AccountFormToken.expected(for:)) ?? "x")
                assertJSONError(response, 401, "signed_out", "\(what) \(path)")
            }
            XCTAssertEqual(try issuer.count("webauthn_challenges"), challengesBefore, "\(what): no challenge issued")
        }
        // A disabled user's session is signed out too.
        let bobCookie = try sessionCookie(for: bob)
        try issuer.users.disable(email: bob.email)
        XCTAssertTrue(accountGET(cookie: bobCookie).sendsToAccountSignIn)
        assertJSONError(accountPOST(AccountResponder.optionsPath, cookie: bobCookie), 401, "signed_out", "disabled user")
        // Signed in: the page is the user's.
        let cookie = try sessionCookie(for: alice)
        let page = accountGET(cookie: cookie)
        XCTAssertEqual(page.status, 200)
        XCTAssertTrue(page.bodyText.contains(alice.email))
        XCTAssertTrue(page.bodyText.contains("data-csrf=\"\(AccountFormToken.expected(for: cookie))\""))
        XCTAssertTrue(page.bodyText.contains("id=\"no-passkeys\""))
    }

    func testACrossSitePostIsRefusedWith403() throws {
        let cookie = try sessionCookie(for: alice)
        let mine = try SoftAuthenticator()
        XCTAssertEqual(try registerViaAccount(mine, cookie: cookie, name: "mine").status, 200)
        let challengesBefore = try issuer.count("webauthn_challenges")
        let headerSets: [(String, [String: String])] = [
            ("Sec-Fetch-Site cross-site", ["sec-fetch-site": "cross-site", "origin": origin]),
            ("Sec-Fetch-Site same-site", ["sec-fetch-site": "same-site"]),
            ("Origin of another site", ["origin": "https://evil.example"]),
        ]
        for (what, headers) in headerSets {
            for path in [AccountResponder.optionsPath, AccountResponder.registerPath, AccountResponder.removePath] {
                let response = accountPOST(path, cookie: cookie, fields: [("id", Base64URL.encode(mine.credentialID))], headers: headers)
                XCTAssertEqual(response.status, 403, "\(what) \(path)")
                XCTAssertTrue(response.bodyText.contains("another site"), "\(what) \(path)")
            }
        }
        XCTAssertEqual(try issuer.count("webauthn_challenges"), challengesBefore, "no challenge issued")
        XCTAssertNotNil(try passkey(mine), "nothing removed")
        XCTAssertTrue(events(named: "passkey_removed").isEmpty)
        // Without Fetch Metadata or Origin (curl), the form token alone decides.
        let plain = accountPOST(AccountResponder.removePath, cookie: cookie, fields: [("id", Base64URL.encode(mine.credentialID))], headers: [:])
        XCTAssertEqual(plain.location, "/account?done=removed")
    }

    func testAWrongFormTokenIsRefusedWith403() throws {
        let cookie = try sessionCookie(for: alice), otherCookie = try sessionCookie(for: alice)
        let mine = try SoftAuthenticator()
        XCTAssertEqual(try registerViaAccount(mine, cookie: cookie, name: "mine").status, 200)
        let challengesBefore = try issuer.count("webauthn_challenges")
        let tokens: [(String, String)] = [
            ("missing", ""), ("random", SecureRandom.token()), ("another session's", AccountFormToken.expected(for: otherCookie)),
            ("the cookie itself", cookie), ("with a suffix", AccountFormToken.expected(for: cookie) + "A"),
        ]
        for (what, token) in tokens {
            for path in [AccountResponder.optionsPath, AccountResponder.registerPath, AccountResponder.removePath] {
                let response = accountPOST(path, cookie: cookie, fields: [("id", Base64URL.encode(mine.credentialID))], csrf: token)
                assertJSONError(response, 403, "invalid_request", "\(what) csrf at \(path)")
            }
        }
        XCTAssertEqual(try issuer.count("webauthn_challenges"), challengesBefore, "no challenge issued")
        XCTAssertNotNil(try passkey(mine), "nothing removed")
        XCTAssertEqual(try passkeys(of: alice).count, 1)
    }

    func testRemovingAnotherUsersPasskeyRemovesNothing() throws {
        let aliceCookie = try sessionCookie(for: alice)
        let bobs = try SoftAuthenticator(), alices = try SoftAuthenticator()
        try enrol(bobs, for: bob, name: "Bob's key")
        try enrol(alices, for: alice, name: "Alice's key")
        AuditLog.recorded = []
        for (what, id) in [("Bob's credential", Base64URL.encode(bobs.credentialID)), ("an unknown credential", Base64URL.encode(SecureRandom.bytes(32))),
                           ("not base64url", "!!!"), ("empty", "")] {
            let response = accountPOST(AccountResponder.removePath, cookie: aliceCookie, fields: [("id", id)])
            XCTAssertEqual(response.status, 303, what)
            XCTAssertEqual(response.location, "/account?done=not_found", what)
        }
        XCTAssertEqual(try passkey(bobs)?.name, "Bob's key", "Bob's passkey is untouched")
        XCTAssertEqual(try passkey(alices)?.name, "Alice's key")
        XCTAssertTrue(events(named: "passkey_removed").isEmpty)
        XCTAssertTrue(accountGET(cookie: aliceCookie, query: "done=not_found").bodyText.contains("That passkey was not found."))
        // Bob's passkey still signs Bob in.
        try assertSignsIn(try harness.startLogin(), bobs, user: bob, signCount: 1)
    }

    func testAPasskeyNameIsHTMLEscapedOnThePage() throws {
        let cookie = try sessionCookie(for: alice)
        let authenticator = try SoftAuthenticator()
        let response = try registerViaAccount(authenticator, cookie: cookie, name: "<script>x</script>")
        XCTAssertEqual(response.status, 200, response.bodyText)
        XCTAssertEqual(try passkey(authenticator)?.name, "<script>x</script>", "stored as given")
        let page = accountGET(cookie: cookie).bodyText
        XCTAssertTrue(page.contains("&lt;script&gt;x&lt;/script&gt;"), page)
        XCTAssertFalse(page.contains("<script>x</script>"))
        XCTAssertFalse(page.contains("<script>x"))
        // Quotes too: a name cannot leave its element or an attribute.
        let quoted = try SoftAuthenticator()
        XCTAssertEqual(try registerViaAccount(quoted, cookie: cookie, name: "a\"b'c&d").status, 200)
        XCTAssertTrue(accountGET(cookie: cookie).bodyText.contains("a&quot;b&#39;c&amp;d"))
    }
}

// MARK: - A software authenticator

/// An authenticator holding one ES256 credential, answering as a browser's
/// `navigator.credentials.create()` / `.get()` would (client data, authenticator
/// data, attestation object in CBOR with `fmt` none, DER signatures: WebAuthn §6.5.5).
final class SoftAuthenticator {
    /// UP | UV | AT.
    static let registrationFlags: UInt8 = 0x45
    /// UP | UV.
    static let assertionFlags: UInt8 = 0x05
    static let aaguid = [UInt8](repeating: 0, count: 16)

    let key: ES256PrivateKey
    let credentialID: [UInt8]

    init(credentialID: [UInt8] = SecureRandom.bytes(32)) throws {
        key = try ES256PrivateKey.generate()
        self.credentialID = credentialID
    }

    var publicKeyCOSE: [UInt8] {
        let jwk = try! key.publicJWK()
        let map: [CBORMapKey: CBORValue] = [1: .int(2), 3: .int(-7), -1: .int(1), -2: .bytes(Base64URL.decode(jwk.x!)!),
                                            -3: .bytes(Base64URL.decode(jwk.y!)!)]
        return CBORValue.map(map).encoded
    }

    static func clientDataJSON(type: String, challenge: String, origin: String) -> [UInt8] {
        Array(#"{"type":"\#(type)","challenge":"\#(challenge)","origin":"\#(origin)","crossOrigin":false}"#.utf8)
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] { [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }

    func registration(challenge: String, rpID: String, origin: String, flags: UInt8 = registrationFlags,
                      signCount: UInt32 = 0) throws -> SoftRegistration {
        var authenticatorData = SHA256.hash(rpID) + [flags] + Self.bigEndian(signCount)
        authenticatorData += Self.aaguid + [UInt8(credentialID.count >> 8), UInt8(credentialID.count & 0xFF)] + credentialID + publicKeyCOSE
        let attestation = CBORValue.map(["fmt": .text("none"), "attStmt": .map([:]), "authData": .bytes(authenticatorData)]).encoded
        return SoftRegistration(clientDataJSON: Self.clientDataJSON(type: "webauthn.create", challenge: challenge, origin: origin),
                                attestationObject: attestation)
    }

    func assertion(challenge: String, rpID: String, origin: String, flags: UInt8 = assertionFlags, signCount: UInt32,
                   userHandle: [UInt8]?) throws -> SoftAssertion {
        let clientData = Self.clientDataJSON(type: "webauthn.get", challenge: challenge, origin: origin)
        let authenticatorData = SHA256.hash(rpID) + [flags] + Self.bigEndian(signCount)
        let signature = try sign(authenticatorData + SHA256.hash(clientData))
        return SoftAssertion(credentialID: credentialID, clientDataJSON: clientData, authenticatorData: authenticatorData,
                             signature: signature, userHandle: userHandle)
    }

    /// ES256PrivateKey signs R || S; WebAuthn carries ES256 as DER (strict).
    func sign(_ message: [UInt8]) throws -> [UInt8] {
        let raw = try key.sign(message)
        precondition(raw.count == 64)
        func integer(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
            var value = Array(bytes.drop { $0 == 0 })
            if value.isEmpty || value[0] & 0x80 != 0 { value.insert(0, at: 0) }
            return [0x02, UInt8(value.count)] + value
        }
        let body = integer(raw[0..<32]) + integer(raw[32..<64])
        return [0x30, UInt8(body.count)] + body
    }
}

struct SoftRegistration {
    var clientDataJSON: [UInt8]
    var attestationObject: [UInt8]

    func response(name: String?, transports: [String]? = nil) -> PasskeyRegistrationResponse {
        PasskeyRegistrationResponse(clientDataJSON: Base64URL.encode(clientDataJSON), attestationObject: Base64URL.encode(attestationObject),
                                    transports: transports, name: name)
    }
}

struct SoftAssertion {
    var credentialID: [UInt8]
    var clientDataJSON: [UInt8]
    var authenticatorData: [UInt8]
    var signature: [UInt8]
    var userHandle: [UInt8]?

    var response: PasskeyAssertionResponse {
        PasskeyAssertionResponse(id: Base64URL.encode(credentialID), clientDataJSON: Base64URL.encode(clientDataJSON),
                                 authenticatorData: Base64URL.encode(authenticatorData), signature: Base64URL.encode(signature),
                                 userHandle: userHandle.map { Base64URL.encode($0) })
    }

    /// The fields the login page's script posts.
    var formFields: [(String, String)] {
        var fields = [("id", Base64URL.encode(credentialID)), ("clientDataJSON", Base64URL.encode(clientDataJSON)),
                      ("authenticatorData", Base64URL.encode(authenticatorData)), ("signature", Base64URL.encode(signature))]
        if let userHandle { fields.append(("userHandle", Base64URL.encode(userHandle))) }
        return fields
    }
}

// MARK: Rename

extension PasskeyCeremoniesTests {

    func testAPasskeyIsRenamedByItsOwnerOnlyWithAUsableName() throws {
        let cookie = try sessionCookie(for: alice)
        let mine = try storeFakePasskey(for: alice, name: "old name")
        let bobs = try storeFakePasskey(for: bob, name: "bob's key")
        func rename(_ id: [UInt8], _ name: String) -> String? {
            accountPOST(AccountResponder.renamePath, cookie: cookie, fields: [("id", Base64URL.encode(id)), ("name", name)]).header("Location")
        }
        XCTAssertEqual(rename(mine.credentialID, "  Work laptop "), "/account?done=renamed")
        XCTAssertEqual(try passkey(credentialID: mine.credentialID)?.name, "Work laptop")
        XCTAssertEqual(events(named: "passkey_renamed").map(\.reason), ["Work laptop"])
        for refused in ["", "   ", "bell\u{7}key", String(repeating: "x", count: 65)] {
            XCTAssertEqual(rename(mine.credentialID, refused), "/account?done=name_refused", refused.debugDescription)
        }
        XCTAssertEqual(rename(bobs.credentialID, "mine now"), "/account?done=not_found")
        XCTAssertEqual(rename([1, 2, 3], "unknown"), "/account?done=not_found")
        XCTAssertEqual(try passkey(credentialID: mine.credentialID)?.name, "Work laptop")
        XCTAssertEqual(try passkey(credentialID: bobs.credentialID)?.name, "bob's key")
        XCTAssertEqual(events(named: "passkey_renamed").count, 1)
    }

    func passkey(credentialID: [UInt8]) throws -> PasskeyRecord? {
        try harness.services.storage.read.passkeys.find(credentialID: credentialID)
    }
}
