import Foundation
import XCTest
@testable import AuthServer
import IssuerComposition
import IssuerStorage
@testable import IssuerStorageSQLite
import SQLiteClient
import SSOCore

/// A token exchange never grants more than app #1's sign-in granted, nor
/// more than app #2 is registered for (RFC 8693 §5, RFC 6749 §3.3); never
/// `device_sso`; never to the ID token's own app.
final class NativeSSOScopeBoundTests: NativeSSOTestCase {

    func testAnExchangeNeverGrantsWhatTheSignInDidNot() throws {
        let app1 = try signInApp1(scope: "openid device_sso")
        for secretProfile in [true, false] {
            let profile = secretProfile ? "device_secret" : "device_id"
            try assertRefused("\(profile): API scope and offline_access", exchangeParameters(app1, secretProfile: secretProfile,
                                                                                            scope: "api:serverA offline_access"),
                              error: "invalid_scope", description: "scope api:serverA was not granted by the sign-in this exchange comes from")
            try assertRefused("\(profile): offline_access", exchangeParameters(app1, secretProfile: secretProfile, scope: "openid offline_access"),
                              error: "invalid_scope", description: "scope offline_access was not granted by the sign-in this exchange comes from")
            let response = harness.tokenPOST(exchangeParameters(app1, secretProfile: secretProfile))
            XCTAssertEqual(response.status, 200, response.bodyText)
            let body = response.jsonObject()
            XCTAssertEqual(body["scope"] as? String, "openid", profile)
            XCTAssertNil(body["refresh_token"], "\(profile): no offline_access in the sign-in, no refresh token")
            let access = try harness.verifiedJWT(try XCTUnwrap(body["access_token"] as? String)).claims
            XCTAssertEqual(access["scope"] as? String, "openid", profile)
            XCTAssertEqual(access["aud"] as? [String], [issuer.config.issuer], "\(profile): no API audience")
        }
        XCTAssertEqual(try issuer.count("refresh_tokens", "client_id = 'mobile-app-002'"), 0)
    }

    func testWithoutScopeTheSignInsGrantWithinApp2sRegistrationButDeviceSSO() throws {
        try issuer.clients.add(clientID: "demo-reader", redirectURIs: [H.customSchemeRedirect],
                               scopes: ["openid", "profile", "api:serverA", "api:serverB"], nativeSSOGroup: DemoData.group)
        let app1 = try signInApp1(scope: "openid email offline_access device_sso api:serverB")
        XCTAssertEqual(try harness.database.queryOne("SELECT scope FROM device_secrets")?.optionalString(0),
                       "openid email offline_access device_sso api:serverB", "the device secret records the grant")
        let reader = harness.tokenPOST(exchangeParameters(app1, clientID: "demo-reader")).jsonObject()
        XCTAssertEqual(reader["scope"] as? String, "openid api:serverB")
        XCTAssertNil(reader["refresh_token"], "offline_access was granted, but demo-reader is not registered for it")
        let app2 = harness.tokenPOST(exchangeParameters(app1)).jsonObject()
        XCTAssertEqual(app2["scope"] as? String, "openid email offline_access api:serverB")
        XCTAssertNotNil(app2["refresh_token"])
        try assertRefused("a scope app #2 is not registered for", exchangeParameters(app1, clientID: "demo-reader", scope: "openid email"),
                          error: "invalid_scope", description: "scope email is not registered for this client")
        try assertRefused("not a scope token at all", exchangeParameters(app1, scope: "openid bad\"scope"),
                          error: "invalid_scope", description: "scope holds a value that is not a scope token (RFC 6749 §3.3)")
    }

    func testDeviceSSOIsNeverGrantedByAnExchange() throws {
        let app1 = try signInApp1()
        for scope in ["device_sso", "openid device_sso api:serverA"] {
            for secretProfile in [true, false] {
                try assertRefused("scope=\(scope), device secret profile: \(secretProfile)",
                                  exchangeParameters(app1, secretProfile: secretProfile, scope: scope),
                                  error: "invalid_scope", description: "device_sso cannot be granted by a token exchange")
            }
        }
    }

    func testAnAppCannotExchangeItsOwnIDToken() throws {
        let app1 = try signInApp1(scope: "openid device_sso")
        for secretProfile in [true, false] {
            for scope in [nil, "openid api:serverA offline_access"] {
                try assertRefused("self-exchange, device secret profile: \(secretProfile), scope: \(scope ?? "none")",
                                  exchangeParameters(app1, clientID: "mobile-app-001", secretProfile: secretProfile, scope: scope),
                                  error: "invalid_grant", description: "an app cannot exchange its own ID token")
            }
        }
    }

    func testADeviceSecretFromBeforeTheScopeWasRecordedIsBoundByTheOriginalAppsRegistration() throws {
        try issuer.clients.add(clientID: "demo-lite", redirectURIs: [H.customSchemeRedirect],
                               scopes: ["openid", "profile", "device_sso", "api:serverA"], nativeSSOGroup: DemoData.group)
        let app1 = try signInApp1(clientID: "demo-lite", scope: "openid device_sso")
        // As IssuerMigration6 leaves a row of an older sign-in.
        try harness.database.execute("UPDATE device_secrets SET scope = NULL")
        let body = harness.tokenPOST(exchangeParameters(app1)).jsonObject()
        XCTAssertEqual(body["scope"] as? String, "openid profile api:serverA", "demo-lite's registration ∩ mobile-app-002's")
        XCTAssertNil(body["refresh_token"])
        try assertRefused("beyond the original app's registration", exchangeParameters(app1, secretProfile: false, scope: "openid api:serverB"),
                          error: "invalid_scope", description: "scope api:serverB was not granted by the sign-in this exchange comes from")
    }
}
