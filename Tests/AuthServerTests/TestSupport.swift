import Foundation
@testable import AuthServer
import SSOCore

/// A fresh issuer home in a temporary folder, removed by `cleanUp()`.
final class TemporaryIssuer {
    let home: String
    let config: GatehouseConfig
    let database: SQLiteDatabase

    init() throws {
        home = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-test-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        config = try GatehouseConfig(home: home, values: [:])
        database = try IssuerSchema.open(config)
    }

    var keys: SigningKeyStore { SigningKeyStore(database: database, keysDirectory: config.keysDirectory) }
    var users: UserStore { UserStore(database: database, hasher: PasswordHasher(parameters: .init(logN: 10, r: 8, p: 1))) }
    var clients: ClientStore { ClientStore(database: database, hasher: PasswordHasher(parameters: .init(logN: 10, r: 8, p: 1))) }

    func cleanUp() { try? FileManager.default.removeItem(atPath: home) }

    /// Every row of every table, to show a refused change left nothing behind.
    func snapshot() throws -> [String] {
        var rows: [String] = []
        for table in ["users", "clients", "client_redirect_uris", "signing_keys"] {
            rows += try database.query("SELECT * FROM \(table) ORDER BY 1").map { "\(table): \($0.values)" }
        }
        return rows
    }
}
