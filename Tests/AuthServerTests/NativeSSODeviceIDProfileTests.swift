import Foundation
import XCTest
@testable import AuthServer
import IssuerComposition
import IssuerStorage
@testable import IssuerStorageSQLite
import SQLiteClient
import SSOCore

/// The seed (`device_id`) profile after the outside review: `di_hash` only
/// for a `device_sso` sign-in of a group that switched the profile on, and a
/// device-id exchange only with an unexpired ID token of such a sign-in.
final class NativeSSODeviceIDProfileTests: NativeSSOTestCase {

    // MARK: di_hash in the code and refresh grants

    func testNoDIHashWithoutDeviceSSOInTheCodeOrTheRefreshGrant() throws {
        let signIn = try harness.signIn()
        let response = harness.tokenPOST(H.codeExchange(code: signIn.code).adding("device_id", Self.deviceID))
        XCTAssertEqual(response.status, 200, response.bodyText)
        let body = response.jsonObject()
        XCTAssertNil(try claims(body)["di_hash"], "device_id without device_sso has no effect")
        XCTAssertNil(body["device_secret"])
        let refreshed = refresh(try XCTUnwrap(body["refresh_token"] as? String), clientID: "mobile-app-001",
                                extra: [("device_id", Self.deviceID)])
        XCTAssertEqual(refreshed.status, 200, refreshed.bodyText)
        XCTAssertNil(try claims(refreshed.jsonObject())["di_hash"])
    }

    func testNoDIHashWhileTheGroupHasTheProfileOffAndAtTheNextRequestOnceSwitchedOn() throws {
        try switchDeviceIDProfile(false)
        let app1 = try signInApp1()
        let idToken = try harness.verifiedJWT(app1.idToken).claims
        XCTAssertNil(idToken["di_hash"], "code grant, switch off")
        XCTAssertEqual(idToken["ds_hash"] as? String, NativeSSOHash.of(app1.deviceSecret), "the device_secret profile does not depend on it")
        let off = refresh(app1.refreshToken, clientID: "mobile-app-001", extra: [("device_id", Self.deviceID)]).jsonObject()
        XCTAssertNil(try claims(off)["di_hash"], "refresh grant, switch off")
        // Switched on by another process (ssoctl): the running responder sees it.
        try switchDeviceIDProfile(true)
        let on = refresh(try XCTUnwrap(off["refresh_token"] as? String), clientID: "mobile-app-001",
                         extra: [("device_id", Self.deviceID)]).jsonObject()
        XCTAssertEqual(try claims(on)["di_hash"] as? String, NativeSSOHash.of(Self.deviceID), "refresh grant, switch on")
        let refreshed = App1SignIn(idToken: try XCTUnwrap(on["id_token"] as? String), deviceSecret: app1.deviceSecret, deviceID: Self.deviceID,
                                   refreshToken: "", sessionSecret: app1.sessionSecret, sid: app1.sid)
        XCTAssertEqual(harness.tokenPOST(exchangeParameters(refreshed, secretProfile: false)).status, 200)
    }

    func testARefreshBindsOnlyTheDeviceIDTheSignInRecorded() throws {
        let app1 = try signInApp1()
        let other = refresh(app1.refreshToken, clientID: "mobile-app-001", extra: [("device_id", "another-device")]).jsonObject()
        XCTAssertNil(try claims(other)["di_hash"], "a device id the sign-in did not send")
        XCTAssertEqual(try claims(other)["ds_hash"] as? String, NativeSSOHash.of(app1.deviceSecret))
    }

    func testAnotherGroupHasTheProfileOnlyOnceSwitchedOn() throws {
        for clientID in ["acme-one", "acme-two"] {
            try issuer.clients.add(clientID: clientID, redirectURIs: [H.customSchemeRedirect], scopes: DemoData.scopes, nativeSSOGroup: "acme")
        }
        let app1 = try signInApp1(clientID: "acme-one")
        XCTAssertNil(try harness.verifiedJWT(app1.idToken).claims["di_hash"], "off by default")
        XCTAssertEqual(harness.tokenPOST(exchangeParameters(app1, clientID: "acme-two")).status, 200, "device_secret profile")
        try assertRefused("seed profile in a group that never switched it on", exchangeParameters(app1, clientID: "acme-two", secretProfile: false),
                          error: "invalid_grant", description: "the actor_token does not match the ID token")
        try switchDeviceIDProfile(true, group: "acme")
        let on = refresh(app1.refreshToken, clientID: "acme-one", extra: [("device_id", Self.deviceID)]).jsonObject()
        let refreshed = App1SignIn(idToken: try XCTUnwrap(on["id_token"] as? String), deviceSecret: app1.deviceSecret, deviceID: Self.deviceID,
                                   refreshToken: "", sessionSecret: app1.sessionSecret, sid: app1.sid)
        XCTAssertEqual(harness.tokenPOST(exchangeParameters(refreshed, clientID: "acme-two", secretProfile: false)).status, 200)
    }

    // MARK: The device-id exchange

    func testSeedExchangeIsRefusedWhileTheSwitchIsOff() throws {
        let app1 = try signInApp1()
        try switchDeviceIDProfile(false)
        try assertRefused("seed profile switched off after the sign-in", exchangeParameters(app1, secretProfile: false), error: "invalid_grant",
                          description: "the device_id profile is not switched on for this native SSO group")
        XCTAssertEqual(harness.tokenPOST(exchangeParameters(app1)).status, 200, "the device_secret profile does not depend on the switch")
        try switchDeviceIDProfile(true)
        XCTAssertEqual(harness.tokenPOST(exchangeParameters(app1, secretProfile: false)).status, 200)
    }

    func testSeedExchangeIsRefusedForASignInWithoutDeviceSSO() throws {
        // Another session on the device did grant device_sso, with the same
        // device id: it does not vouch for this one.
        _ = try signInApp1()
        let signIn = try harness.signIn()
        let body = harness.tokenPOST(H.codeExchange(code: signIn.code).adding("device_id", Self.deviceID)).jsonObject()
        let idToken = try XCTUnwrap(body["id_token"] as? String)
        let sid = try XCTUnwrap(harness.verifiedJWT(idToken).claims["sid"] as? String)
        // Before the fix the code grant put di_hash into such an ID token;
        // those are still validly signed.
        let issuedBeforeTheFix = try resigned(idToken) { $0["di_hash"] = NativeSSOHash.of(Self.deviceID) }
        let app1 = App1SignIn(idToken: issuedBeforeTheFix, deviceSecret: "", deviceID: Self.deviceID, refreshToken: "",
                              sessionSecret: signIn.sessionSecret, sid: sid)
        try assertRefused("device id of a sign-in without device_sso", exchangeParameters(app1, secretProfile: false), error: "invalid_grant",
                          description: "no live device_sso sign-in with this device id in the ID token's session")
    }

    func testSeedExchangeNeedsTheDeviceIDTheSignInRecorded() throws {
        let app1 = try signInApp1()
        let spoofed = App1SignIn(idToken: try resigned(app1.idToken) { $0["di_hash"] = NativeSSOHash.of("spoofed-device") },
                                 deviceSecret: app1.deviceSecret, deviceID: "spoofed-device", refreshToken: "",
                                 sessionSecret: app1.sessionSecret, sid: app1.sid)
        try assertRefused("di_hash of a device id the sign-in did not record", exchangeParameters(spoofed, secretProfile: false),
                          error: "invalid_grant", description: "no live device_sso sign-in with this device id in the ID token's session")
    }

    func testSeedExchangeNeedsAnUnexpiredIDTokenTheDeviceSecretProfileDoesNot() throws {
        let app1 = try signInApp1()
        clock.advance(Int64(issuer.config.idTokenLifetime) - 1)
        XCTAssertEqual(harness.tokenPOST(exchangeParameters(app1, secretProfile: false)).status, 200, "one second before exp")
        clock.advance(1)
        try assertRefused("expired ID token with a device id", exchangeParameters(app1, secretProfile: false), error: "invalid_grant",
                          description: "the ID token has expired; the device_id profile needs an unexpired one")
        XCTAssertEqual(harness.tokenPOST(exchangeParameters(app1)).status, 200, "the device secret is the proof: exp does not matter")
    }
}
