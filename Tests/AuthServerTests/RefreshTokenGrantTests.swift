import Foundation
import XCTest
@testable import AuthServer
import IssuerComposition
import IssuerStorage
@testable import IssuerStorageSQLite
import SQLiteClient
import SSOCore

/// `grant_type=refresh_token`: rotation, the grace window, family revocation.
final class RefreshTokenGrantTests: SignInTestCase {
    typealias H = SignInHarness

    /// Signs in and exchanges the code; returns the token response.
    func firstTokens(scope: String = H.fullScope) throws -> [String: Any] {
        let signedIn = try harness.signIn(H.authorizationParameters(scope: scope))
        let response = harness.tokenPOST(H.codeExchange(code: signedIn.code))
        XCTAssertEqual(response.status, 200, response.bodyText)
        return response.jsonObject()
    }

    func refresh(_ token: String, clientID: String = "mobile-app-001", scope: String? = nil) -> Response {
        var parameters = RequestParameters([("grant_type", "refresh_token"), ("refresh_token", token), ("client_id", clientID)])
        if let scope { parameters = parameters.adding("scope", scope) }
        return harness.tokenPOST(parameters)
    }

    func error(_ response: Response) -> String? { response.jsonObject()["error"] as? String }

    func testRefreshRotatesAndKeepsSubjectAudienceAndAuthTime() throws {
        let first = try firstTokens()
        let original = try harness.verifiedJWT(first["id_token"] as! String).claims
        clock.advance(100)
        let response = refresh(first["refresh_token"] as! String)
        XCTAssertEqual(response.status, 200, response.bodyText)
        XCTAssertEqual(response.header("Cache-Control"), "no-store")
        let body = response.jsonObject()
        let successor = try XCTUnwrap(body["refresh_token"] as? String)
        XCTAssertNotEqual(successor, first["refresh_token"] as? String, "rotated")
        XCTAssertEqual(body["expires_in"] as? Int, 900)
        // draft-ietf-oauth-refresh-token-expiration: the refresh token's own
        // lifetime beside it, at the code exchange and at each rotation.
        let lifetime = harness.services.settings.lifetimes.refreshToken
        XCTAssertEqual(first["refresh_token_expires_in"] as? Int, lifetime)
        XCTAssertEqual(body["refresh_token_expires_in"] as? Int, lifetime, "the successor lives a whole lifetime from now")
        let idToken = try harness.verifiedJWT(body["id_token"] as! String).claims
        XCTAssertEqual(idToken["sub"] as? String, original["sub"] as? String)
        XCTAssertEqual(idToken["aud"] as? String, "mobile-app-001")
        XCTAssertEqual(idToken["auth_time"] as? Int, original["auth_time"] as? Int, "original auth_time (OIDC Core §12.2)")
        XCTAssertEqual(idToken["sid"] as? String, original["sid"] as? String)
        XCTAssertNil(idToken["nonce"])
        XCTAssertEqual(idToken["iat"] as? Int, Int(clock.now))
        let access = try harness.verifiedJWT(body["access_token"] as! String)
        XCTAssertEqual(access.header.typ, "at+jwt")
        XCTAssertEqual(access.claims["scope"] as? String, H.fullScope)
        // The successor works in turn.
        XCTAssertEqual(refresh(successor).status, 200)
    }

    func testNoRefreshTokenNoExpiry() throws {
        let withoutOffline = try firstTokens(scope: "openid profile")
        XCTAssertNil(withoutOffline["refresh_token"])
        XCTAssertNil(withoutOffline["refresh_token_expires_in"], "only beside a refresh token")
    }

    func testNarrowerScopeIsGrantedWiderIsRefused() throws {
        let first = try firstTokens()
        let narrow = refresh(first["refresh_token"] as! String, scope: "openid api:serverA")
        XCTAssertEqual(narrow.status, 200, narrow.bodyText)
        XCTAssertEqual(narrow.jsonObject()["scope"] as? String, "openid api:serverA")
        let access = try harness.verifiedJWT(narrow.jsonObject()["access_token"] as! String).claims
        XCTAssertEqual(access["aud"] as? [String], [issuer.config.apiAOrigin])
        // The successor keeps the original scope (RFC 6749 §6).
        let next = refresh(narrow.jsonObject()["refresh_token"] as! String)
        XCTAssertEqual(next.jsonObject()["scope"] as? String, H.fullScope)
        let before = try issuer.fullSnapshot()
        let wider = refresh(next.jsonObject()["refresh_token"] as! String, scope: "openid admin")
        XCTAssertEqual(error(wider), "invalid_scope")
        XCTAssertEqual(try issuer.fullSnapshot(), before, "refused before any rotation")
    }

    func testGraceWindowReturnsTheSameSuccessorAndNeverASecondOne() throws {
        let first = try firstTokens()
        let spent = first["refresh_token"] as! String
        let one = refresh(spent).jsonObject()
        clock.advance(5)
        let again = refresh(spent)
        XCTAssertEqual(again.status, 200, again.bodyText)
        XCTAssertEqual(again.jsonObject()["refresh_token"] as? String, one["refresh_token"] as? String, "the same successor")
        XCTAssertNotEqual(again.jsonObject()["access_token"] as? String, one["access_token"] as? String, "fresh access token")
        XCTAssertEqual(try issuer.database.queryOne("SELECT count(*) FROM refresh_tokens WHERE used_at IS NULL AND revoked_at IS NULL")?.int(0), 1,
                       "exactly one live token in the family")
    }

    func testReuseAfterTheGraceWindowRevokesTheFamily() throws {
        let first = try firstTokens()
        let spent = first["refresh_token"] as! String
        let successor = refresh(spent).jsonObject()["refresh_token"] as! String
        clock.advance(11)
        XCTAssertEqual(error(refresh(spent)), "invalid_grant")
        XCTAssertEqual(error(refresh(successor)), "invalid_grant", "the whole family is revoked (RFC 9700 §4.14.2)")
        XCTAssertEqual(try issuer.database.queryOne("SELECT count(*) FROM refresh_tokens WHERE revoked_at IS NULL")?.int(0), 0)
    }

    func testReuseAfterTheSuccessorWasUsedRevokesTheFamilyEvenWithinTheWindow() throws {
        let first = try firstTokens()
        let spent = first["refresh_token"] as! String
        let successor = refresh(spent).jsonObject()["refresh_token"] as! String
        let third = refresh(successor).jsonObject()["refresh_token"] as! String
        XCTAssertEqual(error(refresh(spent)), "invalid_grant")
        XCTAssertEqual(error(refresh(third)), "invalid_grant")
    }

    func testTheSealedSuccessorIsBoundToItsRow() throws {
        let first = try firstTokens()
        let spent = first["refresh_token"] as! String
        _ = refresh(spent)
        // Copy the sealed box onto another row: it must not open there.
        let sealed = try XCTUnwrap(issuer.database.queryOne("SELECT successor_sealed FROM refresh_tokens WHERE successor_sealed IS NOT NULL")?.bytes(0))
        XCTAssertThrowsError(try AESGCM.open(sealed, key: SecretKeyFile.loadOrCreate(path: issuer.config.refreshSealingKeyPath),
                                             authenticating: SecretHash.of("another token")))
        let dump = try issuer.fullSnapshot().joined()
        XCTAssertFalse(dump.contains(spent), "refresh tokens are stored hashed")
    }

    func testRefusalsChangeNothing() throws {
        let first = try firstTokens()
        let token = first["refresh_token"] as! String
        let before = try issuer.fullSnapshot()
        XCTAssertEqual(error(refresh("not-a-token")), "invalid_grant")
        XCTAssertEqual(error(refresh(token, clientID: "mobile-app-002")), "invalid_grant", "another client's token")
        XCTAssertEqual(error(harness.tokenPOST(RequestParameters([("grant_type", "refresh_token"), ("client_id", "mobile-app-001")]))),
                       "invalid_request")
        XCTAssertEqual(error(refresh(String(repeating: "x", count: 5000))), "invalid_grant")
        XCTAssertEqual(try issuer.fullSnapshot(), before)
        XCTAssertEqual(refresh(token).status, 200, "the token still works")
    }

    func testExpiredRefreshTokenIsRefused() throws {
        let token = try firstTokens()["refresh_token"] as! String
        clock.advance(Int64(issuer.config.refreshTokenLifetime) + 1)
        XCTAssertEqual(error(refresh(token)), "invalid_grant")
    }

    func testEndedSessionOrDisabledUserStopsRefresh() throws {
        let token = try firstTokens()["refresh_token"] as! String
        let sid = try XCTUnwrap(harness.sessionRows().first?.sid)
        try harness.endSession(sid)
        XCTAssertEqual(error(refresh(token)), "invalid_grant")
    }

    func testNoRefreshTokenWithoutOfflineAccess() throws {
        let body = try firstTokens(scope: "openid email")
        XCTAssertNil(body["refresh_token"])
    }

    /// Concurrent presentations of one token from separate connections (as
    /// separate responder processes would): every answer is the one
    /// successor or invalid_grant, never two different live successors.
    func testConcurrentRefreshesYieldOneSuccessor() throws {
        let token = try firstTokens()["refresh_token"] as! String
        let results = NSMutableArray()
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            do {
                let responder = try TokenResponder(services: issuer.otherProcess(clock: clock.clock))
                let (response, _) = ResponderOutcome.run(responder, SignInHarness.formRequest("/token", RequestParameters([
                    ("grant_type", "refresh_token"), ("refresh_token", token), ("client_id", "mobile-app-001")])))
                let body = (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any] ?? [:]
                results.add("\(response.status) \(body["refresh_token"] as? String ?? body["error"] as? String ?? "?")")
            } catch {
                results.add("error \(error)")
            }
        }
        let answers = Set(results.compactMap { $0 as? String })
        XCTAssertEqual(answers.filter { $0.hasPrefix("200 ") }.count, 1, "\(answers)")
        XCTAssertTrue(answers.allSatisfy { $0.hasPrefix("200 ") || $0 == "400 invalid_grant" }, "\(answers)")
        XCTAssertEqual(try issuer.database.queryOne("SELECT count(*) FROM refresh_tokens WHERE used_at IS NULL AND revoked_at IS NULL")?.int(0), 1)
    }
}
