import Foundation
import XCTest
@testable import AuthServer
import IssuerComposition
import IssuerStorage
@testable import IssuerStorageSQLite
import SQLiteClient
import SSOCore

/// The outside review's high finding and its class: identifiers are bytes.
/// `alice@example.com%00anything` had a lock counter of its own while
/// SQLite, bound with length -1, stopped at the NUL and found alice; the
/// same truncation let `/token` accept `redirect_uri=…%00x` and every
/// endpoint accept `client_id=…%00x`.
final class IdentifierBytesTests: SessionEndpointsTestCase {
    let account = LoginThrottlePolicy.perAccount

    // MARK: The lock bypass

    func testANULVariantOfALockedEmailIsRefusedWith400AndCountsNothing() throws {
        let pending = try harness.startLogin()
        for _ in 1...account.maximumFailures {
            _ = harness.login(pending, email: DemoData.email, password: "wrong password")
        }
        XCTAssertTrue(try harness.throttle.isAccountLocked(email: DemoData.email))
        for variant in ["alice@example.com\u{0}anything", "alice@example.com\u{0}", "\u{0}alice@example.com", "alice@example.com\n",
                        "alice@example.com\u{85}"] {
            try assertDatabaseUnchanged(variant.debugDescription) {
                let response = harness.login(pending, email: variant, password: H.password)
                XCTAssertEqual(response.status, 400, variant.debugDescription)
                XCTAssertNil(response.location, "no sign-in, no redirect")
                XCTAssertTrue(response.bodyText.contains("control character"), response.bodyText)
                XCTAssertTrue(response.setCookieHeaders.isEmpty)
            }
        }
        // Spellings the lookup folds to alice share alice's (stored) account lock.
        for spelling in ["ALICE@EXAMPLE.COM", "Alice@Example.Com"] {
            XCTAssertEqual(harness.login(pending, email: spelling, password: H.password).location,
                           harness.passwordPage(pending, error: "too_many_attempts", retryMinutes: 1, email: spelling), spelling)
        }
    }

    /// Even past the form check (a caller of the store that forgets it), a
    /// NUL cannot make SQLite find another row: text is bound by length.
    func testTextIsBoundWithItsExactByteLength() throws {
        XCTAssertNil(try issuer.users.find(email: "alice@example.com\u{0}anything"))
        XCTAssertNotNil(try issuer.users.find(email: "alice@example.com"))
        XCTAssertNil(try issuer.clients.find(clientID: "mobile-app-001\u{0}x"))
        let row = try XCTUnwrap(issuer.database.queryOne("SELECT ?, length(CAST(? AS BLOB))", [.text("a\u{0}b"), .text("a\u{0}b")]))
        XCTAssertEqual(row.string(0), "a\u{0}b", "read back by length too")
        XCTAssertEqual(row.int(1), 3)
    }

    func testTheThrottleKeysAKnownAccountByItsStoredID() throws {
        XCTAssertEqual(LoginThrottle.accountKey(.user(id: 7)), LoginThrottle.accountKey(.user(id: 7)))
        XCTAssertNotEqual(LoginThrottle.accountKey(.user(id: 7)), LoginThrottle.accountKey(.unknown(email: "7")))
        XCTAssertEqual(LoginThrottle.accountKey(.unknown(email: "Mallory@Example.COM")),
                       LoginThrottle.accountKey(.unknown(email: "mallory@example.com")), "ASCII case folds like COLLATE NOCASE")
        XCTAssertNotEqual(LoginThrottle.accountKey(.unknown(email: "mallory@example.com")),
                          LoginThrottle.accountKey(.unknown(email: "mallory@example.com\u{0}x")))
    }

    // MARK: /token

    func testTheTokenEndpointRefusesControlCharactersInEveryIdentifier() throws {
        let signIn = try harness.signIn()
        let valid = H.codeExchange(code: signIn.code)
        let cases: [(String, RequestParameters)] = [
            ("redirect_uri", valid.setting("redirect_uri", H.customSchemeRedirect + "\u{0}x")),
            ("client_id", valid.setting("client_id", "mobile-app-001\u{0}x")),
            ("code", valid.setting("code", signIn.code + "\u{0}")),
            ("code_verifier", valid.setting("code_verifier", H.verifier + "\u{7F}")),
        ]
        for (name, parameters) in cases {
            try assertDatabaseUnchanged(name) {
                let response = harness.tokenPOST(parameters)
                XCTAssertEqual(response.status, 400, name)
                XCTAssertEqual(response.jsonObject()["error"] as? String, "invalid_request", name)
                XCTAssertEqual(response.jsonObject()["error_description"] as? String, "parameter \(name) contains a control character")
            }
        }
        XCTAssertEqual(harness.tokenPOST(valid).status, 200, "the code was left usable")
    }

    func testBasicCredentialsWithAControlCharacterInTheClientIDAreRefused() throws {
        let response = post(revoke, "/revoke", RequestParameters([("token", "x")]),
                            headers: ["authorization": H.basic("resource-server\u{0}x", Self.serviceSecret)])
        XCTAssertEqual(response.status, 401)
        XCTAssertEqual(response.jsonObject()["error"] as? String, "invalid_client")
    }

    func testRevocationAndIntrospectionRefuseANULInTheToken() throws {
        let tokens = try signInAndExchange()
        let refresh = try XCTUnwrap(tokens.refreshToken)
        try assertDatabaseUnchanged("revoke with a NUL") {
            let response = post(revoke, "/revoke", RequestParameters([("token", refresh + "\u{0}"), ("client_id", "mobile-app-001")]))
            XCTAssertEqual(response.status, 400)
        }
        let introspection = post(introspect, "/introspect", RequestParameters([("token", refresh + "\u{0}")]), headers: serviceAuthorization)
        XCTAssertEqual(introspection.status, 400)
        XCTAssertEqual(introspection.jsonObject()["error_description"] as? String, "parameter token contains a control character")
    }

    // MARK: Canonical equivalence is not equality

    /// "\u{212A}" (KELVIN SIGN) == "K" and "\u{037E}" == ";" for Swift's
    /// String ==; as identifiers they are other bytes, other URIs.
    func testRedirectURIsAreMatchedByTheirBytes() {
        XCTAssertTrue("\u{212A}" == "K", "the trap this test is about")
        XCTAssertFalse(RedirectURIMatcher.matches(requested: "https://app.example/\u{212A}", registered: ["https://app.example/K"]))
        XCTAssertFalse(RedirectURIMatcher.matches(requested: "com.example.app:/cb\u{037E}x", registered: ["com.example.app:/cb;x"]))
        XCTAssertFalse(RedirectURIMatcher.matches(requested: "http://127.0.0.1:8080/\u{212A}", registered: ["http://127.0.0.1/K"]))
        XCTAssertTrue(RedirectURIMatcher.matches(requested: "https://app.example/K", registered: ["https://app.example/K"]))
    }

    func testScopeTokensOutsideTheRFCSyntaxAreInvalidScope() throws {
        try issuer.services.apis.add(audience: "https://k.example.com", name: nil, scopes: ["api:K"])
        try issuer.clients.add(clientID: "kelvin-app", redirectURIs: [H.customSchemeRedirect], scopes: ["openid", "api:K"])
        let response = harness.authorizeGET(H.authorizationParameters(clientID: "kelvin-app", scope: "openid api:\u{212A}"))
        XCTAssertEqual(response.locationQuery["error"], "invalid_scope", "a lookalike of a registered scope is not that scope")
    }

    // MARK: Loopback redirect URIs (RFC 8252 §7.3)

    func testLoopbackPortsMustBeDecimal1To65535() {
        let registered = ["http://127.0.0.1/callback"]
        for uri in ["http://127.0.0.1:/callback", "http://127.0.0.1:0/callback", "http://127.0.0.1:65536/callback",
                    "http://127.0.0.1:99999999999999999999/callback", "http://127.0.0.1:080/callback", "http://127.0.0.1:+80/callback",
                    "http://127.0.0.1: 80/callback", "http://127.0.0.1:8x/callback", "http://127.0.0.1:80:80/callback"] {
            XCTAssertFalse(RedirectURIMatcher.matches(requested: uri, registered: registered), uri)
        }
        for uri in ["http://127.0.0.1:1/callback", "http://127.0.0.1:65535/callback", "http://127.0.0.1/callback"] {
            XCTAssertTrue(RedirectURIMatcher.matches(requested: uri, registered: registered), uri)
        }
    }

    func testRegistrationRefusesResponseParametersAndBadLoopbackPorts() {
        for uri in ["https://app.example/cb?code=1", "https://app.example/cb?x=1&state=abc", "myapp:cb?iss=x", "https://app.example/cb?error=x",
                    "http://127.0.0.1:/cb", "http://127.0.0.1:0/cb", "http://127.0.0.1:70000/cb"] {
            XCTAssertThrowsError(try RedirectURIRules.validateForRegistration(uri), uri)
        }
        XCTAssertNoThrow(try RedirectURIRules.validateForRegistration("https://app.example/cb?codec=1&tenant=a"))
        XCTAssertNoThrow(try RedirectURIRules.validateForRegistration("http://127.0.0.1:8080/cb"))
    }
}
