@testable import AuthServer
import IssuerStorage
import SSOCore
import XCTest

/// The API registry, RFC 8707 resource indicators, and the rules a client
/// registration must meet.
final class APIRegistryTests: XCTestCase {
    var issuer: TemporaryIssuer!
    let orders = RegisteredAPI(audience: "https://orders.example.com", name: "Orders", scopes: ["orders:read", "orders:write"])
    let billing = RegisteredAPI(audience: "https://billing.example.com", name: "Billing", scopes: ["billing:read"])

    override func setUpWithError() throws { issuer = try TemporaryIssuer() }
    override func tearDown() { issuer.cleanUp() }

    func testTheAudienceIsEveryAPIThatOwnsAGrantedScopeOrElseTheIssuer() throws {
        let apis = [billing, orders]
        let both = try TokenTarget.select(scope: ["openid", "orders:read", "billing:read"], resources: nil, apis: apis, issuer: "https://iss")
        XCTAssertEqual(both.audience, ["https://billing.example.com", "https://orders.example.com"])
        XCTAssertEqual(both.scope, ["openid", "orders:read", "billing:read"])
        let none = try TokenTarget.select(scope: ["openid", "profile"], resources: nil, apis: apis, issuer: "https://iss")
        XCTAssertEqual(none.audience, ["https://iss"], "good at the issuer only (userinfo)")
    }

    func testResourceNarrowsTheAudienceAndTheScopeAndRefusesWhatItCannotGive() throws {
        let apis = [billing, orders]
        let scope = ["openid", "orders:read", "billing:read"]
        let narrowed = try TokenTarget.select(scope: scope, resources: ["https://orders.example.com"], apis: apis, issuer: "https://iss")
        XCTAssertEqual(narrowed, TokenTarget(audience: ["https://orders.example.com"], scope: ["openid", "orders:read"]))
        for resource in ["https://unknown.example.com", "https://orders.example.com/", "https://ORDERS.example.com"] {
            XCTAssertThrowsError(try TokenTarget.select(scope: scope, resources: [resource], apis: apis, issuer: "https://iss")) { error in
                XCTAssertEqual((error as? OAuthError)?.code, .invalidTarget, resource)
            }
        }
        XCTAssertThrowsError(try TokenTarget.select(scope: ["openid", "orders:read"], resources: ["https://billing.example.com"], apis: apis,
                                                    issuer: "https://iss"), "the grant has no scope there") { error in
            XCTAssertEqual((error as? OAuthError)?.code, .invalidTarget)
        }
    }

    func testResourceIndicatorsAreAbsoluteURIsWithoutFragments() throws {
        for good in ["https://api.example.com", "https://api.example.com/v1?tenant=a", "urn:example:api", "h+t-t.p://x"] {
            XCTAssertTrue(ResourceIndicator.isAbsoluteURI(good), good)
        }
        for bad in ["", "api.example.com", "/relative", "https://a.example/#f", "https://a b", "1http://a", ":x", "https:",
                    "https://a.example/\u{0}", "https://caf\u{E9}.example", String(repeating: "a", count: 260) + "://x"] {
            XCTAssertFalse(ResourceIndicator.isAbsoluteURI(bad), bad.debugDescription)
        }
        XCTAssertThrowsError(try ResourceIndicator.validateForRegistration("https://a.example/?q=1"), "no query at registration")
        let form = try FormParser.parse(Array("resource=https%3A%2F%2Fa.example&resource=https%3A%2F%2Fa.example&resource=urn%3Ab".utf8))
        XCTAssertEqual(try ResourceIndicator.parse(form), ["https://a.example", "urn:b"])
    }

    func testTheRegistryRefusesStandardScopesSharedScopesAndDuplicateAudiences() throws {
        let apis = issuer.services.apis
        try apis.add(audience: orders.audience, name: orders.name, scopes: orders.scopes + ["orders:read"])
        XCTAssertEqual(try apis.all(), [orders])
        let before = try issuer.snapshot()
        let refusals: [(String, [String], String)] = [
            ("https://other.example.com", ["openid"], "openid"),
            ("https://other.example.com", ["orders:read"], "orders:read is already owned by API https://orders.example.com"),
            ("https://orders.example.com", ["x:y"], "API https://orders.example.com already exists"),
            ("https://other.example.com", [], "--scope"),
            ("not a uri", ["x:y"], "\"not a uri\""),
            ("https://other.example.com", ["bad scope"], "bad scope"),
        ]
        for (audience, scopes, said) in refusals {
            XCTAssertThrowsError(try apis.add(audience: audience, name: nil, scopes: scopes)) { error in
                XCTAssertTrue("\(error)".contains(said), "\(error)")
            }
        }
        XCTAssertEqual(try issuer.snapshot(), before)
        XCTAssertEqual(try apis.owner(of: "orders:write")?.audience, orders.audience)
        XCTAssertNil(try apis.owner(of: "orders:WRITE"), "scopes are bytes")
        XCTAssertTrue(try apis.isKnown("device_sso"))
        XCTAssertFalse(try apis.isKnown("billing:read"))
    }

    func testClientRulesCheckGrantsScopesLifetimesAndApps() throws {
        try issuer.services.apis.add(audience: orders.audience, name: nil, scopes: orders.scopes)
        let clients = issuer.clients
        let machine = try clients.add(ClientRegistration(clientID: "job", scopes: ["orders:read"], secret: "a-long-enough-secret",
                                                         grantTypes: ["client_credentials"]))
        XCTAssertEqual(machine.grantTypes, ["client_credentials"])
        XCTAssertTrue(machine.redirectURIs.isEmpty)
        let before = try issuer.snapshot()
        let refused: [(ClientRegistration, String)] = [
            (ClientRegistration(clientID: "m1", scopes: ["orders:read"], grantTypes: ["client_credentials"]), "confidential"),
            (ClientRegistration(clientID: "m2", scopes: ["openid"], secret: "a-long-enough-secret", grantTypes: ["client_credentials"]),
             "openid"),
            (ClientRegistration(clientID: "m3", secret: "a-long-enough-secret", grantTypes: ["client_credentials"]), "API --scope"),
            (ClientRegistration(clientID: "r1", redirectURIs: ["app:/cb"], grantTypes: ["refresh_token"]), "authorization_code"),
            (ClientRegistration(clientID: "g1", redirectURIs: ["app:/cb"], grantTypes: ["implicit"]), "\"implicit\""),
            (ClientRegistration(clientID: "s1", redirectURIs: ["app:/cb"], scopes: ["orders:delete"]), "orders:delete"),
            (ClientRegistration(clientID: "t1", redirectURIs: ["app:/cb"], accessTokenLifetime: 0), "--access-token-ttl 0"),
            (ClientRegistration(clientID: "t2", redirectURIs: ["app:/cb"], refreshTokenLifetime: Int.max), "--refresh-token-ttl"),
            (ClientRegistration(clientID: "i1", redirectURIs: ["app:/cb"], iosAppID: "abcde12345.com.app"), "abcde12345.com.app"),
            (ClientRegistration(clientID: "a1", redirectURIs: ["app:/cb"], androidPackage: "app"), "\"app\""),
            (ClientRegistration(clientID: "a2", redirectURIs: ["app:/cb"], androidPackage: "com.app",
                                androidCertificateFingerprints: ["AB:CD"]), "AB:CD"),
        ]
        for (registration, said) in refused {
            XCTAssertThrowsError(try clients.add(registration), registration.clientID) { error in
                XCTAssertTrue("\(error)".contains(said), "\(registration.clientID): \(error)")
            }
        }
        XCTAssertEqual(try issuer.snapshot(), before)
        let fingerprint = Array(repeating: "ab", count: 32).joined(separator: ":")
        let app = try clients.add(ClientRegistration(clientID: "app", redirectURIs: ["app:/cb"], iosAppID: "ABCDE12345.com.example.app",
                                                     androidPackage: "com.example.app_1", androidCertificateFingerprints: [fingerprint]))
        XCTAssertEqual(app.androidCertificateFingerprints, [fingerprint.uppercased()], "stored as Digital Asset Links writes them")
    }

    // OpenID Connect Back-Channel Logout 1.0 §2.2: "The value MUST be an
    // absolute URI ... The RP URL MAY contain port, path, and query parameter
    // components. However, it MUST NOT include a fragment component."
    func testABackChannelLogoutURIIsAnAbsoluteHTTPSURIWithoutFragmentAndCanBeRemoved() throws {
        let clients = issuer.clients
        let before = try issuer.snapshot()
        for uri in ["http://backend.example/logout", "https://backend.example/logout#frag", "/logout", "https://", "https://u:p@backend.example/l",
                    "https://backend.example/log out", "https://backend.example/\u{0}"] {
            XCTAssertThrowsError(try clients.add(ClientRegistration(clientID: "bcl", redirectURIs: ["app:/cb"], backchannelLogoutURI: uri)), uri) {
                XCTAssertTrue("\($0)".contains("--backchannel-logout-uri"), "\(uri): \($0)")
            }
        }
        XCTAssertEqual(try issuer.snapshot(), before, "nothing stored on a refusal")
        let added = try clients.add(ClientRegistration(clientID: "bcl", redirectURIs: ["app:/cb"],
                                                       backchannelLogoutURI: "https://backend.example:8443/logout?tenant=a"))
        XCTAssertEqual(added.backchannelLogoutURI, "https://backend.example:8443/logout?tenant=a", "port and query kept")
        var moved = ClientChanges()
        moved.backchannelLogoutURI = "https://other.example/bcl"
        XCTAssertEqual(try clients.update(clientID: "bcl", moved).backchannelLogoutURI, "https://other.example/bcl")
        var removed = ClientChanges()
        removed.backchannelLogoutURI = ""
        XCTAssertNil(try clients.update(clientID: "bcl", removed).backchannelLogoutURI)
        var refused = ClientChanges()
        refused.backchannelLogoutURI = "ftp://other.example/bcl"
        XCTAssertThrowsError(try clients.update(clientID: "bcl", refused))
        XCTAssertNil(try clients.find(clientID: "bcl")?.backchannelLogoutURI, "a refused update changes nothing")
    }

    func testAnUpdateIsCheckedWholeAndARefusalChangesNothing() throws {
        try issuer.services.apis.add(audience: orders.audience, name: nil, scopes: orders.scopes)
        try issuer.clients.add(ClientRegistration(clientID: "app", redirectURIs: ["app:/cb"], scopes: ["openid", "orders:read"]))
        var removeLast = ClientChanges()
        removeLast.removeRedirectURIs = ["app:/cb"]
        var removeAbsent = ClientChanges()
        removeAbsent.removeScopes = ["orders:write"]
        let before = try issuer.snapshot()
        for changes in [removeLast, removeAbsent, ClientChanges()] {
            XCTAssertThrowsError(try issuer.clients.update(clientID: "app", changes))
        }
        XCTAssertEqual(try issuer.snapshot(), before)
        var good = ClientChanges()
        good.addScopes = ["orders:write"]
        good.accessTokenLifetime = 60
        good.requireDPoP = true
        let updated = try issuer.clients.update(clientID: "app", good)
        XCTAssertEqual(updated.scopes, ["openid", "orders:read", "orders:write"])
        XCTAssertEqual(issuer.services.settings.lifetimes.accessToken(for: updated), 60)
        var back = ClientChanges()
        back.accessTokenLifetime = 0
        XCTAssertNil(try issuer.clients.update(clientID: "app", back).accessTokenLifetime, "0 returns to the issuer's")
    }
}
