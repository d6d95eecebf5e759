import Foundation
import XCTest
@testable import AuthServer
import IssuerComposition
import IssuerStorage
@testable import IssuerStorageSQLite
import SQLiteClient
import SSOCore

final class StoreTests: XCTestCase {
    var issuer: TemporaryIssuer!
    override func setUpWithError() throws { issuer = try TemporaryIssuer() }
    override func tearDown() { issuer.cleanUp() }

    func testDatabaseFileIsOwnerOnly() throws {
        let mode = try FileManager.default.attributesOfItem(atPath: issuer.config.databasePath)[.posixPermissions] as? Int
        XCTAssertEqual(mode, 0o600)
    }

    func testUserAddFindAndRefusals() throws {
        let user = try issuer.users.add(email: "bob@example.com", name: "Bob", password: "long enough")
        XCTAssertEqual(try issuer.users.find(email: "BOB@example.com")?.subject, user.subject, "email is case-insensitive")
        XCTAssertTrue(PasswordHasher().verify(password: "long enough", against: user.passwordHash))
        let before = try issuer.snapshot()
        XCTAssertThrowsError(try issuer.users.add(email: "bob@example.com", name: "Bob 2", password: "long enough"))
        XCTAssertThrowsError(try issuer.users.add(email: "carol@example.com", name: "Carol", password: ""))
        XCTAssertThrowsError(try issuer.users.add(email: "carol@example.com", name: "Carol", password: "short"))
        XCTAssertThrowsError(try issuer.users.add(email: "not-an-email", name: "Carol", password: "long enough"))
        XCTAssertThrowsError(try issuer.users.add(email: "c@example.com\r\nX: y", name: "Carol", password: "long enough"))
        XCTAssertThrowsError(try issuer.users.add(email: "c@example.com", name: "", password: "long enough"))
        XCTAssertThrowsError(try issuer.users.add(email: "c@example.com", name: "C", password: "long enough", roles: ["bad role"]))
        XCTAssertThrowsError(try issuer.services.accountChanges.changePassword(email: "nobody@example.com", password: "long enough"))
        XCTAssertThrowsError(try issuer.users.disable(email: "nobody@example.com"))
        XCTAssertEqual(try issuer.snapshot(), before, "refused changes leave the database unchanged")
        try issuer.users.disable(email: "bob@example.com")
        XCTAssertEqual(try issuer.users.find(email: "bob@example.com")?.disabled, true)
    }

    /// The per-process client cache answers for exactly the bytes it was
    /// filled with (U+212A KELVIN SIGN is canonically equivalent to "K", so
    /// Swift's == would call them equal), and learns of a client another
    /// process adds.
    func testTheClientCacheIsKeyedByBytesAndSeesOtherProcesses() throws {
        try issuer.clients.add(clientID: "Kapp", redirectURIs: ["com.example.app:/cb"], scopes: ["openid"])
        XCTAssertEqual(try issuer.clients.find(clientID: "Kapp")?.clientID, "Kapp")
        XCTAssertEqual("\u{212A}app", "Kapp", "the trap: Swift strings compare canonically")
        XCTAssertNil(try issuer.clients.find(clientID: "\u{212A}app"))
        XCTAssertNil(try issuer.clients.find(clientID: "later"))
        try issuer.otherProcess().clients.add(clientID: "later", redirectURIs: ["com.example.app:/cb"], scopes: ["openid"])
        XCTAssertEqual(try issuer.clients.find(clientID: "later")?.clientID, "later")
        XCTAssertNil(try issuer.clients.find(clientID: "\u{212A}app"), "not cached by the miss either")
    }

    func testClientRegistrationRules() throws {
        try DemoData.ensureAPIs(issuer.services, config: issuer.config, demo: true)
        let client = try issuer.clients.add(clientID: "app", redirectURIs: ["com.example.app:/cb", "https://app.example.com/cb", "http://127.0.0.1/cb"],
                                            postLogoutRedirectURIs: ["com.example.app:/bye"], scopes: ["openid", "api:serverA"], nativeSSOGroup: "g")
        XCTAssertFalse(client.isConfidential)
        XCTAssertEqual(client.redirectURIs.count, 3)
        XCTAssertEqual(client.postLogoutRedirectURIs, ["com.example.app:/bye"])
        let before = try issuer.snapshot()
        let refused: [(String, [String], [String])] = [
            ("app", ["https://a.example/cb"], ["openid"]),                        // duplicate
            ("bad id!", ["https://a.example/cb"], ["openid"]),
            ("b", [], ["openid"]),
            ("b", ["javascript:alert(1)"], ["openid"]),
            ("b", ["http://example.com/cb"], ["openid"]),
            ("b", ["https://a.example/cb#frag"], ["openid"]),
            ("b", ["https://a.example/c b"], ["openid"]),
            ("b", ["relative/path"], ["openid"]),
            ("b", ["https://a.example/cb"], ["bad\"scope"]),
        ]
        for (id, uris, scopes) in refused {
            XCTAssertThrowsError(try issuer.clients.add(clientID: id, redirectURIs: uris, scopes: scopes), "\(id) \(uris) \(scopes)")
        }
        XCTAssertThrowsError(try issuer.clients.add(clientID: "c", redirectURIs: ["https://a.example/cb"], scopes: [], secret: "short"))
        XCTAssertEqual(try issuer.snapshot(), before)
        let confidential = try issuer.clients.add(clientID: "svc", redirectURIs: ["https://svc.example/cb"], scopes: [],
                                                  secret: "a-long-enough-secret")
        XCTAssertTrue(confidential.isConfidential)
        XCTAssertEqual(confidential.scopes, ["openid"])
        XCTAssertFalse(confidential.secretHash?.contains("a-long-enough-secret") ?? true, "secret stored hashed")
    }

    /// `--name`: what the pages show instead of the id. Checked as text a
    /// page and a terminal show: 1 to 64 characters, no outer spaces, no
    /// control or formatting characters; "" on update removes it.
    func testClientDisplayNamesAreCheckedAndRemovable() throws {
        let named = try issuer.clients.add(ClientRegistration(clientID: "shop", redirectURIs: ["https://shop.example/cb"],
                                                              displayName: "Acme Shöp & Co"))
        XCTAssertEqual(named.displayName, "Acme Shöp & Co")
        XCTAssertEqual(named.shownName, "Acme Shöp & Co")
        XCTAssertEqual(try issuer.otherProcess().clients.find(clientID: "shop")?.displayName, "Acme Shöp & Co")
        let before = try issuer.snapshot()
        for bad in ["", " Acme", "Acme ", "Acme\nShop", "Acme\u{7}", "Acme\u{85}", "\u{202E}pohS emcA", "Ac\u{200B}me", "Acme\u{2028}",
                    String(repeating: "x", count: 65)] {
            XCTAssertThrowsError(try issuer.clients.add(ClientRegistration(clientID: "other", redirectURIs: ["https://o.example/cb"],
                                                                           displayName: bad)), bad.debugDescription)
            var changes = ClientChanges()
            changes.displayName = bad.isEmpty ? "\t" : bad
            XCTAssertThrowsError(try issuer.clients.update(clientID: "shop", changes), bad.debugDescription)
        }
        XCTAssertEqual(try issuer.snapshot(), before, "a refused name changes nothing")
        XCTAssertNoThrow(try issuer.clients.add(ClientRegistration(clientID: "long", redirectURIs: ["https://l.example/cb"],
                                                                   displayName: String(repeating: "é", count: 64))))
        var rename = ClientChanges()
        rename.displayName = "Acme Shop"
        XCTAssertEqual(try issuer.clients.update(clientID: "shop", rename).displayName, "Acme Shop")
        var remove = ClientChanges()
        remove.displayName = ""
        let unnamed = try issuer.clients.update(clientID: "shop", remove)
        XCTAssertNil(unnamed.displayName)
        XCTAssertEqual(unnamed.shownName, "shop", "without a name the pages show the id")
    }

    func testKeyRotationAndRetirement() throws {
        let keys = issuer.keys
        let first = try keys.rotate()
        let second = try keys.rotate()
        XCTAssertEqual(try keys.activeKID(), second)
        XCTAssertEqual(try keys.publishedKeys().map(\.kid), [second, first], "active first, old key still published")
        let mode = try FileManager.default.attributesOfItem(atPath: issuer.privateKeyPath(second))[.posixPermissions] as? Int
        XCTAssertEqual(mode, 0o600)
        XCTAssertThrowsError(try keys.retire(kid: second), "the active key cannot be retired")
        XCTAssertThrowsError(try keys.retire(kid: "nope"))
        try keys.retire(kid: first)
        XCTAssertEqual(try keys.publishedKeys().map(\.kid), [second])
        XCTAssertFalse(FileManager.default.fileExists(atPath: issuer.privateKeyPath(first)), "retired private key deleted")
        XCTAssertThrowsError(try keys.retire(kid: first), "already retired")
        XCTAssertEqual(try keys.activeSigningKey().kid, second)
    }

    func testDemoDataMatchesTheContract() throws {
        XCTAssertTrue(try DemoData.ensure(issuer.services, config: issuer.config, password: "demo-password"))
        XCTAssertFalse(try DemoData.ensure(issuer.services, config: issuer.config, password: "other-pass"))
        let client = try XCTUnwrap(issuer.clients.find(clientID: "mobile-app-002"))
        XCTAssertEqual(client.nativeSSOGroup, "demo")
        XCTAssertEqual(client.displayName, "Demo Mobile App 2")
        XCTAssertEqual(try issuer.clients.find(clientID: "mobile-app-001")?.displayName, "Demo Mobile App 1")
        XCTAssertEqual(Set(client.redirectURIs), ["myapp:auth/callback", "https://localhost:8443/mobile/postlogin.html", "http://127.0.0.1/callback"])
        XCTAssertEqual(Set(client.postLogoutRedirectURIs), ["myapp:auth/logout", "https://localhost:8443/mobile/postlogout.html"])
        XCTAssertEqual(client.scopes, ["openid", "profile", "email", "offline_access", "device_sso", "api:serverA", "api:serverB"])
        let alice = try XCTUnwrap(issuer.users.find(email: "alice@example.com"))
        XCTAssertEqual(alice.name, "Alice Martin")
        XCTAssertEqual(alice.roles, ["user"])
        XCTAssertEqual(try issuer.services.apis.all().map(\.audience), ["https://localhost:8444", "https://localhost:8445"],
                       "the demo APIs are registered with the demo")
    }

    /// An administrator deleted a demo client and both demo APIs, then gave
    /// `api:serverA` to an API of their own: the next demo start brings the
    /// client back without failing, api-b's API back, and leaves theirs alone.
    func testTheDemoComesBackWithoutTouchingAnAdministratorsOwnAPIs() throws {
        try DemoData.ensure(issuer.services, config: issuer.config, password: "demo-password")
        try issuer.clients.delete(clientID: "mobile-app-001")
        for audience in ["https://localhost:8444", "https://localhost:8445"] { _ = try issuer.services.apis.remove(audience: audience) }
        try issuer.services.apis.add(audience: "https://orders.example.com", name: nil, scopes: ["api:serverA"])
        XCTAssertFalse(try DemoData.ensure(issuer.services, config: issuer.config, password: "demo-password"))
        XCTAssertEqual(try issuer.services.apis.all().map(\.audience), ["https://localhost:8445", "https://orders.example.com"])
        let client = try XCTUnwrap(issuer.clients.find(clientID: "mobile-app-001"))
        XCTAssertEqual(client.scopes, ["openid", "profile", "email", "offline_access", "device_sso", "api:serverA", "api:serverB"],
                       "api:serverA is known (the administrator's), so the client may ask for it")
    }
}
