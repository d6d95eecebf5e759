import Foundation
import XCTest
@testable import AuthServer
import IssuerComposition
import IssuerStorage
@testable import IssuerStorageSQLite
import SQLiteClient
import SSOCore

/// OpenID Connect Native SSO for Mobile Apps: app #1 signs in through the
/// browser with `device_sso` (and a device id); app #2 exchanges app #1's ID
/// token and the device secret (or device id) for tokens of its own.
final class NativeSSOTests: NativeSSOTestCase {

    // MARK: The hashes

    func testHashRuleKnownAnswer() {
        // SHA-256("abc") = ba7816bf8f01cfea414140de5dae2223 b00361a3...; the
        // left half, base64url without padding.
        XCTAssertEqual(NativeSSOHash.of("abc"), "ungWv48Bz-pBQUDeXa4iIw")
        XCTAssertTrue(NativeSSOHash.matches("abc", claim: "ungWv48Bz-pBQUDeXa4iIw"))
        XCTAssertFalse(NativeSSOHash.matches("abd", claim: "ungWv48Bz-pBQUDeXa4iIw"))
        XCTAssertEqual(NativeSSOHash.fromDigest(SecretHash.of("abc")), NativeSSOHash.of("abc"), "ds_hash from the stored hash")
    }

    // MARK: App #1: the code exchange

    func testCodeExchangeWithDeviceSSOReturnsADeviceSecretBoundToTheIDToken() throws {
        let app1 = try signInApp1()
        let claims = try harness.verifiedJWT(app1.idToken).claims
        XCTAssertEqual(claims["ds_hash"] as? String, NativeSSOHash.of(app1.deviceSecret))
        XCTAssertEqual(claims["di_hash"] as? String, NativeSSOHash.of(Self.deviceID))
        XCTAssertEqual(claims["sid"] as? String, app1.sid)
        let row = try XCTUnwrap(harness.database.queryOne("SELECT sid, client_id, device_id, revoked_at, expires_at FROM device_secrets"))
        XCTAssertEqual(row.string(0), app1.sid)
        XCTAssertEqual(row.string(1), "mobile-app-001")
        XCTAssertEqual(row.optionalString(2), Self.deviceID)
        XCTAssertNil(row.optionalInt(3))
        XCTAssertEqual(try issuer.count("device_secrets", "secret_hash = ?", [.blob(SecretHash.of(app1.deviceSecret))]), 1, "stored hashed")
        XCTAssertEqual(try issuer.count("device_secrets", "CAST(secret_hash AS TEXT) = ?", [.text(app1.deviceSecret)]), 0, "never in clear")
    }

    func testWithoutDeviceSSONoDeviceSecret() throws {
        let signIn = try harness.signIn()
        let response = harness.tokenPOST(H.codeExchange(code: signIn.code))
        XCTAssertEqual(response.status, 200)
        XCTAssertNil(response.jsonObject()["device_secret"])
        let claims = try harness.verifiedJWT(response.jsonObject()["id_token"] as! String).claims
        XCTAssertNil(claims["ds_hash"])
        XCTAssertNil(claims["di_hash"])
        XCTAssertEqual(try issuer.count("device_secrets"), 0)
    }

    func testMalformedDeviceIDIsRefusedAndTheCodeStaysUsable() throws {
        let signIn = try harness.signIn(H.authorizationParameters(scope: Self.nativeScope))
        for bad in ["has space", "tab\there", String(repeating: "x", count: 257), "é"] {
            let before = try nativeSnapshot()
            let response = harness.tokenPOST(H.codeExchange(code: signIn.code).adding("device_id", bad))
            XCTAssertEqual(response.jsonObject()["error"] as? String, "invalid_request", bad)
            XCTAssertEqual(try nativeSnapshot(), before, bad)
        }
        XCTAssertEqual(harness.tokenPOST(H.codeExchange(code: signIn.code)).status, 200)
    }

    func testCodeReplayRevokesTheDeviceSecretItIssued() throws {
        let signIn = try harness.signIn(H.authorizationParameters(scope: Self.nativeScope))
        let first = harness.tokenPOST(H.codeExchange(code: signIn.code)).jsonObject()
        let secret = try XCTUnwrap(first["device_secret"] as? String)
        XCTAssertEqual(harness.tokenPOST(H.codeExchange(code: signIn.code)).jsonObject()["error"] as? String, "invalid_grant")
        XCTAssertNotNil(try deviceSecretRevokedAt(secret) ?? nil, "revoked with what the first use issued")
    }

    // MARK: App #2: the exchange, both profiles

    func testDeviceSecretProfileWithBasicAndEmptyPassword() throws {
        let app1 = try signInApp1()
        clock.advance(60)
        let response = harness.tokenPOST(exchangeParameters(app1, clientID: nil),
                                         headers: ["authorization": H.basic("mobile-app-002", "")])
        try assertIssuedForApp2(response, app1: app1)
    }

    func testDeviceIDProfileWithClientIDInTheBody() throws {
        let app1 = try signInApp1()
        let response = harness.tokenPOST(exchangeParameters(app1, secretProfile: false, scope: "openid api:serverA"))
        try assertIssuedForApp2(response, app1: app1, scope: "openid api:serverA")
    }

    func assertIssuedForApp2(_ response: Response, app1: App1SignIn, scope: String = "openid profile email offline_access api:serverA api:serverB",
                             file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertEqual(response.status, 200, response.bodyText, file: file, line: line)
        XCTAssertEqual(response.header("Cache-Control"), "no-store", file: file, line: line)
        XCTAssertEqual(response.header("Pragma"), "no-cache", file: file, line: line)
        let body = response.jsonObject(file: file, line: line)
        XCTAssertEqual(body["issued_token_type"] as? String, "urn:ietf:params:oauth:token-type:access_token", file: file, line: line)
        XCTAssertEqual(body["token_type"] as? String, "Bearer", file: file, line: line)
        XCTAssertEqual(body["expires_in"] as? Int, 900, file: file, line: line)
        XCTAssertEqual(body["scope"] as? String, scope, file: file, line: line)
        XCTAssertNil(body["device_secret"], "an exchange issues no device secret", file: file, line: line)
        let original = try harness.verifiedJWT(app1.idToken).claims
        let idToken = try harness.verifiedJWT(try XCTUnwrap(body["id_token"] as? String, file: file, line: line)).claims
        XCTAssertEqual(idToken["aud"] as? String, "mobile-app-002", file: file, line: line)
        XCTAssertEqual(idToken["sub"] as? String, original["sub"] as? String, file: file, line: line)
        XCTAssertEqual(idToken["sid"] as? String, app1.sid, file: file, line: line)
        XCTAssertEqual(idToken["auth_time"] as? Int, original["auth_time"] as? Int, file: file, line: line)
        XCTAssertEqual(idToken["amr"] as? [String], ["pwd"], file: file, line: line)
        XCTAssertEqual(idToken["iss"] as? String, issuer.config.issuer, file: file, line: line)
        let access = try harness.verifiedJWT(try XCTUnwrap(body["access_token"] as? String, file: file, line: line))
        XCTAssertEqual(access.header.typ, "at+jwt", file: file, line: line)
        XCTAssertEqual(access.claims["client_id"] as? String, "mobile-app-002", file: file, line: line)
        XCTAssertEqual(access.claims["sid"] as? String, app1.sid, file: file, line: line)
        var audience: [String] = []
        if scope.contains("api:serverA") { audience.append(issuer.config.apiAOrigin) }
        if scope.contains("api:serverB") { audience.append(issuer.config.apiBOrigin) }
        XCTAssertEqual(access.claims["aud"] as? [String], audience, file: file, line: line)
        if scope.contains("offline_access") {
            let refreshToken = try XCTUnwrap(body["refresh_token"] as? String, file: file, line: line)
            XCTAssertEqual(try harness.database.queryOne("SELECT sid, client_id FROM refresh_tokens WHERE token_hash = ?",
                                                         [.blob(SecretHash.of(refreshToken))]).map { [$0.string(0), $0.string(1)] },
                           [app1.sid, "mobile-app-002"], "bound to the same session", file: file, line: line)
            XCTAssertEqual(refresh(refreshToken, clientID: "mobile-app-002").status, 200, file: file, line: line)
        } else {
            XCTAssertNil(body["refresh_token"], file: file, line: line)
        }
    }

    func testAnExpiredIDTokenIsAcceptedWhileTheSessionLives() throws {
        let app1 = try signInApp1()
        clock.advance(Int64(issuer.config.idTokenLifetime) + 3600)
        XCTAssertEqual(harness.tokenPOST(exchangeParameters(app1)).status, 200)
    }

    func testRequestedScopeWithoutOpenIDStillGetsAnIDToken() throws {
        let app1 = try signInApp1()
        let body = harness.tokenPOST(exchangeParameters(app1, scope: "api:serverB")).jsonObject()
        XCTAssertEqual(body["scope"] as? String, "openid api:serverB")
        XCTAssertNotNil(body["id_token"])
        XCTAssertNil(body["refresh_token"], "no offline_access, no refresh token")
    }

    /// As for the code grant: `offline_access` gives a refresh token only to
    /// a client registered for the refresh_token grant.
    func testNoRefreshTokenForAClientWithoutTheRefreshGrant() throws {
        try issuer.clients.add(ClientRegistration(clientID: "no-refresh-app", redirectURIs: ["norefresh:cb"], scopes: DemoData.scopes,
                                                  nativeSSOGroup: DemoData.group, grantTypes: ["authorization_code"]))
        let app1 = try signInApp1()
        let response = harness.tokenPOST(exchangeParameters(app1, clientID: "no-refresh-app", scope: "openid offline_access"))
        XCTAssertEqual(response.status, 200, response.bodyText)
        XCTAssertNotNil(response.jsonObject()["access_token"])
        XCTAssertNil(response.jsonObject()["refresh_token"])
        XCTAssertEqual(try harness.database.queryOne("SELECT count(*) FROM refresh_tokens WHERE client_id = 'no-refresh-app'")?.int(0), 0)
    }

    // MARK: Refused exchanges: the documented error, nothing changed

    func testRefusedExchangesChangeNothing() throws {
        try issuer.clients.add(clientID: "outsider", redirectURIs: ["outsider:cb"], scopes: DemoData.scopes)
        try issuer.clients.add(clientID: "other-group", redirectURIs: ["other:cb"], scopes: DemoData.scopes, nativeSSOGroup: "other")
        let app1 = try signInApp1()
        // A second session of Alice (another device), with its own device secret.
        let other = try signInApp1(deviceID: "other-device")
        let stranger = try RSAKey.generate()
        let base = exchangeParameters(app1)
        let idOnly = exchangeParameters(app1, secretProfile: false)
        var tampered = app1.idToken.split(separator: ".").map(String.init)
        tampered[1] = Base64URL.encode(Array(String(decoding: Base64URL.decode(tampered[1])!, as: UTF8.self)
            .replacingOccurrences(of: app1.sid, with: other.sid).utf8))
        let cases: [(String, RequestParameters, [String: String], String, Int)] = [
            // Bindings and tokens: invalid_grant.
            ("device secret does not match ds_hash", base.setting("actor_token", other.deviceSecret), [:], "invalid_grant", 400),
            ("made-up device secret", base.setting("actor_token", SecureRandom.token()), [:], "invalid_grant", 400),
            ("device id does not match di_hash", idOnly.setting("actor_token", "another-device"), [:], "invalid_grant", 400),
            ("device secret as a device id", idOnly.setting("actor_token", app1.deviceSecret), [:], "invalid_grant", 400),
            ("device secret of another session (ds_hash re-signed to match)",
             base.setting("subject_token", try resigned(app1.idToken) { $0["ds_hash"] = NativeSSOHash.of(other.deviceSecret) })
                 .setting("actor_token", other.deviceSecret), [:], "invalid_grant", 400),
            ("id token signed by another key", base.setting("subject_token", try resigned(app1.idToken, key: stranger)), [:], "invalid_grant", 400),
            ("id token with an unknown kid", base.setting("subject_token", try resigned(app1.idToken, key: stranger, kid: "nope")), [:],
             "invalid_grant", 400),
            ("id token payload altered", base.setting("subject_token", tampered.joined(separator: ".")), [:], "invalid_grant", 400),
            ("id token from another issuer", base.setting("subject_token", try resigned(app1.idToken) { $0["iss"] = "https://evil.example" }),
             [:], "invalid_grant", 400),
            ("id token with alg none", base.setting("subject_token", try resigned(app1.idToken, alg: "none")), [:], "invalid_grant", 400),
            ("access token as subject", base.setting("subject_token", try XCTUnwrap(
                harness.tokenPOST(exchangeParameters(app1)).jsonObject()["access_token"] as? String)), [:], "invalid_grant", 400),
            ("garbage subject token", base.setting("subject_token", "not.a.jwt"), [:], "invalid_grant", 400),
            ("id token without sid", base.setting("subject_token", try resigned(app1.idToken) { $0["sid"] = nil }), [:], "invalid_grant", 400),
            ("id token for another user of the session", base.setting("subject_token", try resigned(app1.idToken) { $0["sub"] = "someone-else" }),
             [:], "invalid_grant", 400),
            ("requesting client outside any group", base.setting("client_id", "outsider"), [:], "invalid_grant", 400),
            ("requesting client in another group", base.setting("client_id", "other-group"), [:], "invalid_grant", 400),
            ("id token's aud client outside the group", base.setting("subject_token", try resigned(app1.idToken) { $0["aud"] = "outsider" }),
             [:], "invalid_grant", 400),
            ("id token's aud client unknown", base.setting("subject_token", try resigned(app1.idToken) { $0["aud"] = "no-such-app" }),
             [:], "invalid_grant", 400),
            // Scope.
            ("scope outside the client", base.adding("scope", "openid admin"), [:], "invalid_scope", 400),
            // RFC 6749 §3.3: scope tokens are ASCII, as at every other endpoint.
            ("scope with a non-ASCII token", base.adding("scope", "openid api:server\u{212A}"), [:], "invalid_scope", 400),
            ("scope with a quote", base.adding("scope", "openid a\"b"), [:], "invalid_scope", 400),
            // Request shape: invalid_request / invalid_target.
            ("no subject_token", base.removing("subject_token"), [:], "invalid_request", 400),
            ("no subject_token_type", base.removing("subject_token_type"), [:], "invalid_request", 400),
            ("wrong subject_token_type", base.setting("subject_token_type", TokenExchangeRequest.accessTokenType), [:], "invalid_request", 400),
            ("no actor_token", base.removing("actor_token").removing("actor_token_type"), [:], "invalid_request", 400),
            ("no actor_token_type", base.removing("actor_token_type"), [:], "invalid_request", 400),
            ("wrong actor_token_type", base.setting("actor_token_type", "urn:ietf:params:oauth:token-type:jwt"), [:], "invalid_request", 400),
            ("actor_token_type without actor_token", base.removing("actor_token"), [:], "invalid_request", 400),
            ("unsupported requested_token_type", base.adding("requested_token_type", TokenExchangeRequest.idTokenType), [:],
             "invalid_request", 400),
            ("repeated subject_token", base.adding("subject_token", app1.idToken), [:], "invalid_request", 400),
            ("no audience", base.removing("audience"), [:], "invalid_request", 400),
            ("wrong audience", base.setting("audience", issuer.config.apiAOrigin), [:], "invalid_target", 400),
            ("resource indicator", base.adding("resource", issuer.config.apiAOrigin), [:], "invalid_target", 400),
            // Client authentication.
            ("malformed Basic header", base.removing("client_id"), ["authorization": "Basic !!!notbase64"], "invalid_client", 401),
            ("Basic without a colon", base.removing("client_id"), ["authorization": "Basic " + Data("mobile-app-002".utf8).base64EncodedString()],
             "invalid_client", 401),
            ("public client with a password", base.removing("client_id"), ["authorization": H.basic("mobile-app-002", "guess")],
             "invalid_client", 401),
            ("no client at all", base.removing("client_id"), [:], "invalid_client", 401),
            ("unknown client", base.setting("client_id", "no-such-app"), [:], "invalid_client", 401),
        ]
        for (what, parameters, headers, error, status) in cases {
            try assertRefused(what, parameters, headers: headers, error: error, status: status)
        }
        // And the untouched original still works.
        XCTAssertEqual(harness.tokenPOST(base).status, 200)
    }

    func testARevokedDeviceSecretIsRefusedEvenWithALiveSession() throws {
        let app1 = try signInApp1()
        try harness.database.execute("UPDATE device_secrets SET revoked_at = ?", [.integer(clock.now)])
        try assertRefused("revoked device secret", exchangeParameters(app1), error: "invalid_grant")
        // The seed profile stands on the same row (the device_sso sign-in that
        // recorded the device id): revoked with it.
        try assertRefused("device id of a revoked sign-in", exchangeParameters(app1, secretProfile: false), error: "invalid_grant",
                          description: "no live device_sso sign-in with this device id in the ID token's session")
    }

    // MARK: Session end kills everything

    func testLogoutOfApp1KillsApp2sRefreshTokenAndTheDeviceSecret() throws {
        let app1 = try signInApp1()
        let app2 = harness.tokenPOST(exchangeParameters(app1)).jsonObject()
        let app2Refresh = try XCTUnwrap(app2["refresh_token"] as? String)
        let query = FormParser.encode([("id_token_hint", app1.idToken), ("post_logout_redirect_uri", "myapp:auth/logout")])
        let response = get(logout, "/logout", query: query, headers: SignInHarness.cookieHeader([SSOSessions.cookieName: app1.sessionSecret]))
        XCTAssertEqual(response.status, 303, response.bodyText)
        XCTAssertEqual(response.location, "myapp:auth/logout")
        XCTAssertNotNil(try deviceSecretRevokedAt(app1.deviceSecret) ?? nil, "device secret revoked")
        XCTAssertEqual(refresh(app2Refresh, clientID: "mobile-app-002").jsonObject()["error"] as? String, "invalid_grant")
        try assertRefused("exchange after logout (device secret)", exchangeParameters(app1), error: "invalid_grant")
        try assertRefused("exchange after logout (device id)", exchangeParameters(app1, secretProfile: false), error: "invalid_grant")
    }

    func testSsoctlSessionRevokeAndPasswordChangeRevokeDeviceSecrets() throws {
        let app1 = try signInApp1()
        try harness.services.accountChanges.endSession(sid: app1.sid)
        XCTAssertNotNil(try deviceSecretRevokedAt(app1.deviceSecret) ?? nil)
        try assertRefused("exchange after sessions revoke", exchangeParameters(app1), error: "invalid_grant")
        let second = try signInApp1()
        try harness.services.accountChanges
            .changePassword(email: DemoData.email, password: "another long password 123")
        XCTAssertNotNil(try deviceSecretRevokedAt(second.deviceSecret) ?? nil)
        try assertRefused("exchange after password change", exchangeParameters(second, secretProfile: false), error: "invalid_grant")
    }

    // MARK: Refresh keeps the binding

    func testRefreshKeepsDSHashAndReturnsTheSameDeviceSecretWhenSent() throws {
        let app1 = try signInApp1()
        let plain = refresh(app1.refreshToken, clientID: "mobile-app-001").jsonObject()
        XCTAssertNil(plain["device_secret"], "not sent, not returned (the issuer holds only its hash)")
        let plainClaims = try harness.verifiedJWT(plain["id_token"] as! String).claims
        XCTAssertEqual(plainClaims["ds_hash"] as? String, NativeSSOHash.of(app1.deviceSecret))
        XCTAssertNil(plainClaims["di_hash"], "device_id not sent with the refresh")
        let echoed = refresh(plain["refresh_token"] as! String, clientID: "mobile-app-001",
                             extra: [("device_secret", app1.deviceSecret), ("device_id", Self.deviceID)]).jsonObject()
        XCTAssertEqual(echoed["device_secret"] as? String, app1.deviceSecret, "the same secret, never rotated")
        let claims = try harness.verifiedJWT(echoed["id_token"] as! String).claims
        XCTAssertEqual(claims["ds_hash"] as? String, NativeSSOHash.of(app1.deviceSecret))
        XCTAssertEqual(claims["di_hash"] as? String, NativeSSOHash.of(Self.deviceID))
        // The refreshed ID token works for app #2 like the first one.
        let refreshed = App1SignIn(idToken: echoed["id_token"] as! String, deviceSecret: app1.deviceSecret, deviceID: Self.deviceID,
                                   refreshToken: "", sessionSecret: app1.sessionSecret, sid: app1.sid)
        XCTAssertEqual(harness.tokenPOST(exchangeParameters(refreshed)).status, 200)
        XCTAssertEqual(harness.tokenPOST(exchangeParameters(refreshed, secretProfile: false)).status, 200)
    }

    // MARK: Sweeper and discovery

    func testSweeperRemovesRevokedDeviceSecrets() throws {
        let app1 = try signInApp1()
        _ = try signInApp1()
        try harness.services.accountChanges.endSession(sid: app1.sid)
        let removed = try Sweeper(settings: IssuerSettings(config: issuer.config), storage: issuer.storage, clock: clock.clock).sweep()
        XCTAssertEqual(removed["device_secrets"], 1, "the revoked one; the live one stays")
        XCTAssertEqual(try issuer.count("device_secrets"), 1)
    }

    func testDiscoveryAdvertisesNativeSSO() {
        let document = DiscoveryDocument(config: issuer.config)
        XCTAssertEqual(document.native_sso_supported, true)
        XCTAssertTrue(document.grant_types_supported.contains("urn:ietf:params:oauth:grant-type:token-exchange"))
        XCTAssertTrue(document.scopes_supported.contains("device_sso"))
    }
}
