import Foundation
import XCTest
@testable import AuthServer
import IssuerComposition
import IssuerStorage
@testable import IssuerStorageSQLite
import SQLiteClient
import SSOCore

/// The per-group switch of the seed (`device_id`) profile: off by default,
/// on for the demo group, settable before a group's first client.
final class NativeSSOGroupStoreTests: XCTestCase {
    var issuer: TemporaryIssuer!
    var groups: NativeSSOGroups { issuer.services.nativeSSOGroups }

    override func setUpWithError() throws { issuer = try TemporaryIssuer() }
    override func tearDown() { issuer?.cleanUp() }

    func ensureDemo() throws {
        try DemoData.ensure(issuer.services, config: issuer.config, password: "demo-password-123")
    }

    func addClient(_ clientID: String, group: String?) throws {
        try issuer.clients.add(clientID: clientID, redirectURIs: ["com.example.\(clientID):/cb"], scopes: ["openid", "device_sso"],
                               nativeSSOGroup: group)
    }

    func snapshot() throws -> [String] {
        try issuer.snapshot() + issuer.database.query("SELECT * FROM native_sso_groups ORDER BY 1").map { "native_sso_groups: \($0.values)" }
    }

    func testOffByDefaultOnForTheDemoGroup() throws {
        try ensureDemo()
        try addClient("acme-one", group: "acme")
        try addClient("loner", group: nil)
        XCTAssertEqual(try groups.group(named: "demo"),
                       NativeSSOGroup(name: "demo", members: ["mobile-app-001", "mobile-app-002"], allowsDeviceID: true))
        XCTAssertEqual(try groups.group(named: "acme"), NativeSSOGroup(name: "acme", members: ["acme-one"], allowsDeviceID: false))
        XCTAssertFalse(try groups.allowsDeviceID(group: "acme"))
        XCTAssertFalse(try groups.allowsDeviceID(group: nil), "a client outside every group")
        XCTAssertFalse(try groups.allowsDeviceID(group: "no-such-group"))
    }

    func testSwitchRoundTripAndTheDemoDataKeepsTheAdministratorsChoice() throws {
        try ensureDemo()
        try addClient("acme-one", group: "acme")
        try addClient("acme-two", group: "acme")
        XCTAssertEqual(try groups.setAllowsDeviceID(true, group: "acme").allowsDeviceID, true)
        XCTAssertTrue(try groups.allowsDeviceID(group: "acme"))
        XCTAssertEqual(try groups.setAllowsDeviceID(false, group: "acme"),
                       NativeSSOGroup(name: "acme", members: ["acme-one", "acme-two"], allowsDeviceID: false))
        XCTAssertFalse(try groups.allowsDeviceID(group: "acme"))
        try groups.setAllowsDeviceID(false, group: "demo")
        try ensureDemo()
        XCTAssertFalse(try groups.allowsDeviceID(group: "demo"), "a restart (ssoctl setup --demo) does not switch it back on")
    }

    func testBadNamesAreRefusedAndChangeNothing() throws {
        try ensureDemo()
        let before = try snapshot()
        for name in ["", "has space", "x\u{0}y", String(repeating: "g", count: 65), "démo"] {
            for allowed in [true, false] {
                XCTAssertThrowsError(try groups.setAllowsDeviceID(allowed, group: name), name.debugDescription) { error in
                    XCTAssertTrue(error is ValidationError, "\(error)")
                }
            }
            XCTAssertThrowsError(try groups.group(named: name), name.debugDescription)
        }
        XCTAssertEqual(try snapshot(), before)
    }

    /// A group can exist before its clients: the switch is set for a group
    /// no client names yet, and the first client that joins it has it.
    func testAGroupIsSetUpBeforeItsFirstClient() throws {
        XCTAssertEqual(try groups.group(named: "acme"), NativeSSOGroup(name: "acme", members: [], allowsDeviceID: false))
        XCTAssertEqual(try groups.setAllowsDeviceID(true, group: "acme"), NativeSSOGroup(name: "acme", members: [], allowsDeviceID: true))
        XCTAssertTrue(try groups.allowsDeviceID(group: "acme"))
        try addClient("acme-one", group: "acme")
        XCTAssertEqual(try groups.group(named: "acme"), NativeSSOGroup(name: "acme", members: ["acme-one"], allowsDeviceID: true))
        XCTAssertEqual(try groups.setAllowsDeviceID(false, group: "acme").members, ["acme-one"])
        XCTAssertFalse(try groups.allowsDeviceID(group: "acme"))
    }

    func testTheMigrationSwitchesOnAnExistingDemoGroupOnlyAndLeavesOldDeviceSecretsUnbounded() throws {
        // A database as the previous release left it (schema 5), with the demo
        // clients, another group and a device secret.
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-v5-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: home) }
        let config = try GatehouseConfig(home: home, values: [:])
        let old = try SQLiteDatabase(path: config.databasePath)
        try Migrator.migrate(old, component: "issuer", migrations: SQLiteIssuerSchema.migrations.filter { $0.version <= 5 })
        // Rows as that release wrote them (today's store writes later columns).
        for (clientID, group) in DemoData.clientIDs.map({ ($0, "demo") }) + [("acme-one", "acme")] {
            try old.execute("INSERT INTO clients (client_id, scopes, native_sso_group, created_at) VALUES (?, ?, ?, 1)",
                            [.text(clientID), .text(DemoData.scopes.joined(separator: " ")), .text(group)])
        }
        try old.execute("""
            INSERT INTO device_secrets (secret_hash, sid, user_id, client_id, device_id, created_at, expires_at)
            VALUES (?, 's1', 1, 'mobile-app-001', 'd1', 1, 4000000000)
            """, [.blob(SecretHash.of("old-secret"))])

        let upgraded = try SQLiteIssuerStorage(databasePath: config.databasePath, keysDirectory: config.keysDirectory)
        let groups = NativeSSOGroups(storage: upgraded)
        XCTAssertTrue(try groups.allowsDeviceID(group: "demo"), "the demo stack keeps both profiles")
        XCTAssertFalse(try groups.allowsDeviceID(group: "acme"), "every other group starts off")
        let record = try XCTUnwrap(DeviceSecrets(storage: upgraded, clock: { 1000 }).live(secret: "old-secret"))
        XCTAssertNil(record.scope, "no recorded grant: the exchange bounds by the original app's registration")
    }
}
