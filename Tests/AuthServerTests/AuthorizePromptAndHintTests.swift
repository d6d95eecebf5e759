import Foundation
import XCTest
@testable import AuthServer
import IssuerComposition
import IssuerStorage
@testable import IssuerStorageSQLite
import SQLiteClient
import SSOCore

/// OIDC Core §3.1.2.1 and §3.1.2.6: `prompt=consent` and
/// `prompt=select_account` are never met silently, and `id_token_hint`
/// names the only user a request may be answered for (the outside review:
/// `prompt=none` with another user's hint returned the session user's code).
final class AuthorizePromptAndHintTests: SessionEndpointsTestCase {
    static let bob = "bob@example.com"

    /// Bob signs in (in a browser of his own) and gets an ID token.
    func bobsIDToken() throws -> String {
        _ = try harness.addUser(Self.bob)
        let pending = try harness.startLogin()
        let code = try XCTUnwrap(harness.login(pending, email: Self.bob, password: H.otherPassword).locationQuery["code"])
        return try XCTUnwrap(harness.tokenPOST(H.codeExchange(code: code)).jsonObject()["id_token"] as? String)
    }

    func testPromptConsentIsConsentRequiredWithOrWithoutASession() throws {
        let session = try harness.signIn().sessionSecret
        for cookies in [[:], ["sso_session": session]] {
            try assertDatabaseUnchanged("prompt=consent") {
                let response = harness.authorizeGET(H.authorizationParameters().adding("prompt", "consent"), cookies: cookies)
                XCTAssertEqual(response.locationBase, H.customSchemeRedirect)
                XCTAssertEqual(response.locationQuery["error"], "consent_required")
                XCTAssertEqual(response.locationQuery["state"], "state-123")
                XCTAssertNil(response.locationQuery["code"])
            }
        }
    }

    func testPromptNoneWithAHintForTheSessionUserIssuesACode() throws {
        let alice = try signInAndExchange()
        let hint = try XCTUnwrap(alice.idToken)
        clock.advance(7200)  // an expired ID token still names its user
        let response = harness.authorizeGET(H.authorizationParameters().adding("prompt", "none").adding("id_token_hint", hint),
                                            cookies: ["sso_session": alice.sessionSecret])
        XCTAssertNotNil(response.locationQuery["code"], response.location ?? "")
    }

    func testPromptNoneWithAnotherUsersHintIsLoginRequired() throws {
        let bobsHint = try bobsIDToken()
        let alice = try signInAndExchange()
        try assertDatabaseUnchanged("prompt=none, Bob's hint, Alice's session") {
            let response = harness.authorizeGET(H.authorizationParameters().adding("prompt", "none").adding("id_token_hint", bobsHint),
                                                cookies: ["sso_session": alice.sessionSecret])
            XCTAssertEqual(response.locationQuery["error"], "login_required")
            XCTAssertNil(response.locationQuery["code"], "never the session user's code")
        }
    }

    func testWithoutPromptNoneAnotherUsersHintAsksForThatUser() throws {
        let bobsHint = try bobsIDToken()
        let alice = try signInAndExchange()
        let parameters = H.authorizationParameters().adding("id_token_hint", bobsHint)
        // Alice's session does not answer for Bob: the sign-in page.
        let asAlice = try harness.startLogin(parameters, cookies: ["sso_session": alice.sessionSecret])
        let sessionsBefore = try issuer.count("sso_sessions")
        let wrongUser = harness.login(asAlice)
        XCTAssertEqual(wrongUser.locationQuery["error"], "login_required", "Alice signed in, the hint named Bob")
        XCTAssertNil(wrongUser.cookie("sso_session"), "no session for the wrong user")
        XCTAssertEqual(try issuer.count("sso_sessions"), sessionsBefore)
        XCTAssertEqual(try issuer.count("pending_authorizations"), 0, "the request is answered, not left waiting")
        let asBob = try harness.startLogin(parameters)
        XCTAssertNotNil(harness.login(asBob, email: Self.bob, password: H.otherPassword).locationQuery["code"])
    }

    func testAHintThatIsNotOurIDTokenIsInvalidRequest() throws {
        let alice = try signInAndExchange()
        for (name, hint) in [("garbage", "not.a.jwt"), ("an access token", alice.accessToken),
                             ("a tampered ID token", String(try XCTUnwrap(alice.idToken).dropLast(2)) + "AA")] {
            try assertDatabaseUnchanged(name) {
                let response = harness.authorizeGET(H.authorizationParameters().adding("id_token_hint", hint),
                                                    cookies: ["sso_session": alice.sessionSecret])
                XCTAssertEqual(response.locationQuery["error"], "invalid_request", name)
                XCTAssertEqual(response.locationQuery["error_description"], "id_token_hint is not an ID token from this issuer", name)
            }
        }
    }

    func testErrorPagesAndRedirectsSayWhyInTheLog() throws {
        let (page, pageDetail) = ResponderOutcome.run(harness.authorize, Request(method: "GET", path: "/authorize",
            query: H.authorizationParameters().setting("redirect_uri", "https://evil.example/cb").encoded))
        XCTAssertEqual(page.status, 400)
        XCTAssertEqual(pageDetail, "redirect_uri is not registered for client mobile-app-001")
        let (redirect, redirectDetail) = ResponderOutcome.run(harness.authorize, Request(method: "GET", path: "/authorize",
            query: H.authorizationParameters(scope: "openid api:nope").encoded))
        XCTAssertEqual(redirect.locationQuery["error"], "invalid_scope")
        XCTAssertEqual(redirectDetail, "authorization error redirect: invalid_scope: scope \"api:nope\" is neither standard nor owned by a registered API")
    }
}
