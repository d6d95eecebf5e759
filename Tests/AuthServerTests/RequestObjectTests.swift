import Foundation
import XCTest
@testable import AuthServer
import IssuerStorage
import SSOCore

/// Request objects (RFC 9101) at /authorize and /par, in-process: the
/// object's parameters are the request (§6.3), every check of §4-§6 and
/// §10.8 refuses with `invalid_request_object` and stores nothing, and
/// `--require-signed-request-object` (§10.5) holds on both endpoints.
final class RequestObjectTests: SignInTestCase {
    typealias H = SignInHarness
    let key = try! ES256PrivateKey.generate()
    let stranger = try! ES256PrivateKey.generate()
    var par: PushedAuthorizationResponder!

    enum Claim: Encodable {
        case string(String), integer(Int64), strings([String]), bool(Bool)
        func encode(to encoder: Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .string(let value): try container.encode(value)
            case .integer(let value): try container.encode(value)
            case .strings(let values): try container.encode(values)
            case .bool(let value): try container.encode(value)
            }
        }
    }

    override func setUpWithError() throws {
        try super.setUpWithError()
        par = try PushedAuthorizationResponder(services: harness.services)
        var changes = ClientChanges()
        changes.jwks = String(decoding: try UpstreamFixture.jwks([UpstreamFixture.ecJWK(kid: "app-1", key: key)]), as: UTF8.self)
        try harness.services.clients.update(clientID: "mobile-app-001", changes)
    }

    /// The claims of a valid request object for mobile-app-001.
    func claims(state: String = "state-from-object") -> [String: Claim] {
        var claims: [String: Claim] = ["iss": .string("mobile-app-001"), "aud": .string(harness.issuerOrigin),
                                       "exp": .integer(clock.now + 300), "nbf": .integer(clock.now), "iat": .integer(clock.now),
                                       "jti": .string(UUID().uuidString)]
        for (name, value) in H.authorizationParameters(state: state).pairs { claims[name] = .string(value) }
        return claims
    }

    func object(_ claims: [String: Claim], key: ES256PrivateKey? = nil, kid: String = "app-1",
                typ: String? = "oauth-authz-req+jwt") throws -> String {
        try JWTSigner.sign(claims, header: JWTHeader(alg: "ES256", kid: kid, typ: typ), key: key ?? self.key)
    }

    /// What the query carries beside the object: client_id, and a
    /// registered redirect_uri so a refusal can go back to the app.
    func query(_ object: String, extra: [(String, String)] = []) -> RequestParameters {
        RequestParameters([("client_id", "mobile-app-001"), ("request", object), ("redirect_uri", H.customSchemeRedirect)] + extra)
    }

    func storedState() throws -> String? {
        try harness.database.queryOne("SELECT state FROM pending_authorizations")?.optionalString(0)
    }

    func testTheObjectsParametersAreTheRequestAndTheQuerysAreIgnored() throws {
        let response = harness.authorizeGET(query(try object(claims()), extra: [("state", "state-from-query"), ("scope", "openid nosuch")]))
        XCTAssertEqual(response.status, 303, response.bodyText)
        XCTAssertEqual(response.locationBase, "/login.html")
        XCTAssertEqual(try storedState(), "state-from-object", "RFC 9101 §6.3: only the object's parameters are used")
        // A request object may leave out typ (OIDC Core §6.1 request objects have none).
        XCTAssertEqual(harness.authorizePOST(query(try object(claims(), typ: nil))).locationBase, "/login.html")
    }

    func testEveryFailedCheckIsInvalidRequestObjectAndStoresNothing() throws {
        func without(_ name: String) -> [String: Claim] { var value = claims(); value[name] = nil; return value }
        func with(_ name: String, _ claim: Claim) -> [String: Claim] { var value = claims(); value[name] = claim; return value }
        let cases: [(String, String)] = [
            ("another key", try object(claims(), key: stranger)),
            ("an unknown kid", try object(claims(), kid: "nosuch")),
            ("alg none", "eyJhbGciOiJub25lIn0." + Base64URL.encode(Array(try JSONEncoder().encode(claims()))) + "."),
            ("encrypted (five parts)", "eyJhbGciOiJSU0EtT0FFUCJ9.a.b.c.d"),
            ("a client assertion's typ", try object(claims(), typ: "client-authentication+jwt")),
            ("no aud", try object(without("aud"))),
            ("aud another server", try object(with("aud", .string("https://elsewhere.example")))),
            ("no iss", try object(without("iss"))),
            ("iss another client", try object(with("iss", .string("web-app")))),
            ("client_id another client", try object(with("client_id", .string("web-app")))),
            ("no client_id", try object(without("client_id"))),
            ("no exp", try object(without("exp"))),
            ("expired", try object(with("exp", .integer(clock.now - 120)))),
            ("exp more than an hour ahead", try object(with("exp", .integer(clock.now + 7200)))),
            ("nbf in the future", try object(with("nbf", .integer(clock.now + 600)))),
            ("nbf over an hour ago", try object(with("nbf", .integer(clock.now - 7200)))),
            ("exp as a string", try object(with("exp", .string(String(clock.now + 60))))),
            ("a nested request", try object(with("request", .string("x.y.z")))),
            ("a nested request_uri", try object(with("request_uri", .string("urn:ietf:params:oauth:request_uri:x")))),
            ("a scope that is not a string", try object(with("scope", .bool(true)))),
        ]
        for (name, value) in cases {
            let response = harness.authorizeGET(query(value, extra: [("state", "s-1")]))
            XCTAssertEqual(response.status, 303, name)
            XCTAssertEqual(response.locationBase, H.customSchemeRedirect, name)
            XCTAssertEqual(response.locationQuery["error"], "invalid_request_object", "\(name): \(response.location ?? "")")
            XCTAssertEqual(response.locationQuery["state"], "s-1", name)
            let pushed = harness.run(par, H.formRequest("/par", RequestParameters([("client_id", "mobile-app-001"), ("request", value)])))
            XCTAssertEqual(pushed.status, 400, name)
            XCTAssertEqual(pushed.jsonObject()["error"] as? String, "invalid_request_object", "\(name) at /par")
        }
        // Without a registered redirect_uri in the query nothing is trusted: an error page.
        let page = harness.authorizeGET(RequestParameters([("client_id", "mobile-app-001"), ("request", try object(claims(), key: stranger))]))
        XCTAssertEqual(page.status, 400)
        XCTAssertNil(page.location)
        XCTAssertTrue(page.bodyText.contains("invalid_request_object"), "the integrator's details name the error")
        XCTAssertEqual(try issuer.count("pending_authorizations"), 0)
        XCTAssertEqual(try issuer.count("pushed_authorizations"), 0)
    }

    func testAResourceArrayAndANumericMaxAgeAreRead() throws {
        var value = claims()
        value["max_age"] = .integer(0)
        value["resource"] = .strings([harness.issuer.config.apiAOrigin])
        let response = harness.authorizeGET(query(try object(value)))
        XCTAssertEqual(response.locationBase, "/login.html", response.location ?? response.bodyText)
        XCTAssertEqual(try harness.database.queryOne("SELECT max_age FROM pending_authorizations")?.optionalInt(0), 0)
    }

    func testAPushedObjectIsStoredAsItsParametersAndClaimedAtAuthorize() throws {
        let body = RequestParameters([("client_id", "mobile-app-001"), ("request", try object(claims())), ("state", "state-from-body")])
        let pushed = harness.run(par, H.formRequest("/par", body))
        XCTAssertEqual(pushed.status, 201, pushed.bodyText)
        let requestURI = try XCTUnwrap(pushed.jsonObject()["request_uri"] as? String)
        let response = harness.authorizeGET(RequestParameters([("client_id", "mobile-app-001"), ("request_uri", requestURI)]))
        XCTAssertEqual(response.locationBase, "/login.html", response.bodyText)
        XCTAssertEqual(try storedState(), "state-from-object")
    }

    func testRequireSignedRequestObjectRefusesPlainRequestsAtAuthorizeAndPAR() throws {
        var changes = ClientChanges()
        changes.requireSignedRequestObject = true
        try harness.services.clients.update(clientID: "mobile-app-001", changes)

        let plain = harness.authorizeGET(H.authorizationParameters())
        XCTAssertEqual(plain.locationQuery["error"], "invalid_request", plain.location ?? plain.bodyText)
        // The marker a verified push is stored with means nothing in a query or a push body.
        let forged = harness.authorizeGET(H.authorizationParameters().adding("request_object", "verified"))
        XCTAssertEqual(forged.locationQuery["error"], "invalid_request")
        let plainPush = harness.run(par, H.formRequest("/par", H.authorizationParameters().adding("request_object", "verified")))
        XCTAssertEqual(plainPush.status, 400)
        XCTAssertEqual(plainPush.jsonObject()["error"] as? String, "invalid_request")
        XCTAssertEqual(try issuer.count("pending_authorizations"), 0)
        XCTAssertEqual(try issuer.count("pushed_authorizations"), 0)

        XCTAssertEqual(harness.authorizeGET(query(try object(claims()))).locationBase, "/login.html")
        let pushed = harness.run(par, H.formRequest("/par", RequestParameters([("client_id", "mobile-app-001"), ("request", try object(claims()))])))
        let requestURI = try XCTUnwrap(pushed.jsonObject()["request_uri"] as? String, pushed.bodyText)
        let claimed = harness.authorizeGET(RequestParameters([("client_id", "mobile-app-001"), ("request_uri", requestURI)]))
        XCTAssertEqual(claimed.locationBase, "/login.html", claimed.location ?? claimed.bodyText)
    }

    func testRequiringSignedObjectsNeedsKeys() throws {
        var changes = ClientChanges()
        changes.requireSignedRequestObject = true
        XCTAssertThrowsError(try harness.services.clients.update(clientID: "mobile-app-002", changes)) { error in
            XCTAssertTrue("\(error)".contains("--jwks-file"), "\(error)")
        }
    }
}
