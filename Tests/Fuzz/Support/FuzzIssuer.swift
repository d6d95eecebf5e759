import Foundation
import Glibc
@testable import AuthServer
import IssuerStorageSQLite
import SSOCore

/// One temporary issuer home per fuzzing process: the SQLite backend,
/// migrated, with the demo APIs and clients of docs/ARCHITECTURE.md (DemoData) and
/// one confidential client, and the issuer's services on it, built as
/// Tests/AuthServerTests/TestSupport.swift does (not IssuerComposition,
/// which would link PostgreSQL too); removed at exit. Created once, not per
/// input: opening and migrating costs milliseconds.
public enum FuzzIssuer {
    nonisolated(unsafe) static var homePath = ""
    /// A fixed clock, so refusals do not depend on the time of the run.
    public static let now: Int64 = 1_750_000_000

    public static let shared: (config: GatehouseConfig, services: IssuerServices) = {
        let home = FileManager.default.temporaryDirectory
            .appendingPathComponent("gatehouse-fuzz-\(getpid())-\(UUID().uuidString)").path
        try! FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        homePath = home
        atexit { try? FileManager.default.removeItem(atPath: FuzzIssuer.homePath) }
        let config = try! GatehouseConfig(home: home, values: [:])
        let storage = try! SQLiteIssuerStorage(databasePath: config.databasePath, keysDirectory: config.keysDirectory)
        let services = IssuerServices(settings: IssuerSettings(config: config), storage: storage,
                                      sealingKeys: SealingKeyFiles(keysDirectory: config.keysDirectory),
                                      hasher: PasswordHasher(parameters: .init(logN: 10, r: 8, p: 1)), clock: { FuzzIssuer.now })
        // The demo APIs first: a client's API scopes must be registered ones.
        try! DemoData.ensureAPIs(services, config: config, demo: true)
        for clientID in DemoData.clientIDs {
            try! services.clients.add(clientID: clientID,
                                      redirectURIs: ["myapp:auth/callback", config.issuer + "/mobile/postlogin.html", "http://127.0.0.1/callback"],
                                      postLogoutRedirectURIs: ["myapp:auth/logout", config.issuer + "/mobile/postlogout.html"],
                                      scopes: DemoData.scopes, nativeSSOGroup: DemoData.group)
        }
        // A confidential client too, so the Basic-secret branch is reachable.
        try! services.clients.add(clientID: "fuzz-confidential", redirectURIs: ["https://client.example/cb"],
                                  scopes: ["openid", "profile"], secret: "fuzz-client-secret-0123456789")
        return (config, services)
    }()
}
