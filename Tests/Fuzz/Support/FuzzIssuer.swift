import Foundation
import Glibc
@testable import AuthServer
import SSOCore

/// One temporary issuer home per fuzzing process: migrated SQLite database
/// with the demo clients of docs/DESIGN.md (DemoData), removed at exit.
/// Created once, not per input: opening and migrating costs milliseconds.
enum FuzzIssuer {
    nonisolated(unsafe) static var homePath = ""

    static let shared: (config: GatehouseConfig, database: SQLiteDatabase) = {
        let home = FileManager.default.temporaryDirectory
            .appendingPathComponent("gatehouse-fuzz-\(getpid())-\(UUID().uuidString)").path
        try! FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        homePath = home
        atexit { try? FileManager.default.removeItem(atPath: FuzzIssuer.homePath) }
        let config = try! GatehouseConfig(home: home, values: [:])
        let database = try! IssuerSchema.open(config)
        let clients = ClientStore(database: database, hasher: PasswordHasher(parameters: .init(logN: 10, r: 8, p: 1)))
        for clientID in DemoData.clientIDs {
            try! clients.add(clientID: clientID,
                             redirectURIs: ["myapp:auth/callback", config.issuer + "/mobile/postlogin.html", "http://127.0.0.1/callback"],
                             postLogoutRedirectURIs: ["myapp:auth/logout", config.issuer + "/mobile/postlogout.html"],
                             scopes: DemoData.scopes, nativeSSOGroup: "demo")
        }
        // A confidential client too, so the Basic-secret branch is reachable.
        try! clients.add(clientID: "fuzz-confidential", redirectURIs: ["https://client.example/cb"],
                         scopes: ["openid", "profile"], secret: "fuzz-client-secret-0123456789")
        return (config, database)
    }()
}
