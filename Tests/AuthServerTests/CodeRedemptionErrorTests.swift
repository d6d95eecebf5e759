import Foundation
import XCTest
@testable import AuthServer
import IssuerComposition
import IssuerStorage
@testable import IssuerStorageSQLite
import SQLiteClient
import SSOCore

/// Each way a code exchange can go wrong says which one it was: on the wire
/// (an error_description naming the mistake in what the caller sent) and in
/// the log (the exact reason). And a spent code revokes what it issued only
/// when presented with proof of possession (the outside review's finding:
/// a used code from browser history, with no verifier, killed the tokens).
final class CodeRedemptionErrorTests: SignInTestCase {
    typealias H = SignInHarness

    func exchange(_ parameters: RequestParameters) -> (description: String?, log: String?) {
        let (response, detail) = ResponderOutcome.run(harness.token, H.formRequest("/token", parameters))
        XCTAssertEqual(response.status, 400, response.bodyText)
        XCTAssertEqual(response.jsonObject()["error"] as? String, "invalid_grant")
        return (response.jsonObject()["error_description"] as? String, detail)
    }

    func testTheFourClassicMistakesAreToldApart() throws {
        let code = try harness.signIn().code
        let valid = H.codeExchange(code: code)
        let cases: [(RequestParameters, String, String)] = [
            (valid.setting("redirect_uri", "https://localhost:8443/mobile/postlogin.html"),
             "redirect_uri does not match the authorization request", "another redirect_uri"),
            (valid.setting("code_verifier", PKCE.makeVerifier()), "code_verifier does not match the code_challenge", "PKCE verification failed"),
            (valid.setting("client_id", "mobile-app-002"), "the code was issued to another client", "issued to another client"),
            (valid.setting("code", SecureRandom.token()), "the code is unknown", "code unknown"),
        ]
        for (parameters, description, log) in cases {
            let (wire, detail) = exchange(parameters)
            XCTAssertEqual(wire, description)
            XCTAssertTrue(detail?.contains(log) ?? false, "log line: \(detail ?? "nil")")
            XCTAssertFalse(detail?.contains(code) ?? true, "the code itself is never logged")
        }
        XCTAssertEqual(harness.tokenPOST(valid).status, 200, "none of them burnt the code")
        let (wire, detail) = exchange(valid)
        XCTAssertEqual(wire, "the code was already used")
        XCTAssertTrue(detail?.contains("revoked") ?? false, detail ?? "nil")

        let late = try harness.signIn().code
        clock.advance(61)
        XCTAssertEqual(exchange(H.codeExchange(code: late)).description, "the code has expired")
    }

    /// A spent code presented without the verifier, with a wrong one, with
    /// another redirect URI or by another client proves nothing: refused,
    /// and the first redemption's tokens live on.
    func testAReplayWithoutProofOfPossessionRevokesNothing() throws {
        let code = try harness.signIn().code
        XCTAssertEqual(harness.tokenPOST(H.codeExchange(code: code)).status, 200)
        let replays: [(String, RequestParameters)] = [
            ("no verifier", H.codeExchange(code: code).removing("code_verifier")),
            ("wrong verifier", H.codeExchange(code: code, verifier: PKCE.makeVerifier())),
            ("wrong redirect_uri", H.codeExchange(code: code, redirectURI: "https://localhost:8443/mobile/postlogin.html")),
            ("another client", H.codeExchange(code: code, clientID: "mobile-app-002")),
        ]
        for (name, parameters) in replays {
            try assertDatabaseUnchanged(name) {
                XCTAssertEqual(harness.tokenPOST(parameters).status, 400, name)
            }
        }
        XCTAssertEqual(try issuer.count("refresh_tokens", "revoked_at IS NULL"), 1, "the victim's refresh token lives")
        XCTAssertEqual(try issuer.count("revoked_access_tokens"), 0, "and its access token")
        // The replay that proves possession still revokes (RFC 6749 §4.1.2).
        let (_, detail) = exchange(H.codeExchange(code: code))
        XCTAssertTrue(detail?.contains("revoked") ?? false)
        XCTAssertEqual(try issuer.count("refresh_tokens", "revoked_at IS NULL"), 0)
        XCTAssertEqual(try issuer.count("revoked_access_tokens"), 2, "the first use's access token, and its grant's")
        XCTAssertEqual(try issuer.count("revoked_access_tokens", "jti LIKE 'grant:%'"), 1)
    }

    func testRefreshReuseIsNamedInTheLogButNotOnTheWire() throws {
        let code = try harness.signIn().code
        let first = try XCTUnwrap(harness.tokenPOST(H.codeExchange(code: code)).jsonObject()["refresh_token"] as? String)
        let refresh = RequestParameters([("grant_type", "refresh_token"), ("refresh_token", first), ("client_id", "mobile-app-001")])
        XCTAssertEqual(harness.tokenPOST(refresh).status, 200)
        clock.advance(Int64(issuer.config.refreshGracePeriod) + 1)
        let (wire, detail) = exchange(refresh)
        XCTAssertEqual(wire, "the refresh token is invalid, expired or revoked", "an attacker learns nothing")
        XCTAssertTrue(detail?.contains("reuse detected") ?? false, detail ?? "nil")
        XCTAssertTrue(detail?.contains("revoked") ?? false, detail ?? "nil")
        let (_, afterwards) = exchange(refresh)
        XCTAssertTrue(afterwards?.contains("revoked") ?? false, "the family is gone: \(afterwards ?? "nil")")
    }

    func testAWiderScopeAtRefreshNamesTheScope() throws {
        let code = try harness.signIn(H.authorizationParameters(scope: "openid offline_access api:serverA")).code
        let first = try XCTUnwrap(harness.tokenPOST(H.codeExchange(code: code)).jsonObject()["refresh_token"] as? String)
        let response = harness.tokenPOST(RequestParameters([("grant_type", "refresh_token"), ("refresh_token", first),
                                                             ("client_id", "mobile-app-001"), ("scope", "openid api:serverB")]))
        XCTAssertEqual(response.jsonObject()["error"] as? String, "invalid_scope")
        XCTAssertEqual(response.jsonObject()["error_description"] as? String, "scope api:serverB exceeds the original grant")
    }
}
