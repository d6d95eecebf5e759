import Foundation
@testable import AuthServer
import IssuerComposition
import IssuerStorage
@testable import IssuerStorageSQLite
import SQLiteClient
import SSOCore

/// A fresh issuer home in a temporary folder, removed by `cleanUp()`: the
/// SQLite backend (the tests look at its rows directly where a store API
/// would not show what matters) and the issuer's services on it.
final class TemporaryIssuer {
    static let fastHasher = PasswordHasher(parameters: .init(logN: 10, r: 8, p: 1))
    let home: String
    let config: GatehouseConfig
    let storage: SQLiteIssuerStorage
    let services: IssuerServices
    var database: SQLiteDatabase { storage.database }

    init(clock: @escaping Clock = systemClock) throws {
        home = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-test-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        config = try GatehouseConfig(home: home, values: [:])
        storage = try SQLiteIssuerStorage(databasePath: config.databasePath, keysDirectory: config.keysDirectory)
        services = IssuerServices(settings: IssuerSettings(config: config), storage: storage,
                                  sealingKeys: SealingKeyFiles(keysDirectory: config.keysDirectory), hasher: Self.fastHasher, clock: clock,
                                  messages: PageCatalogues.real)
    }

    /// The services as another process would have them: their own
    /// connection to the same file.
    func otherProcess(clock: @escaping Clock = systemClock) throws -> IssuerServices {
        let other = SQLiteIssuerStorage(database: try SQLiteDatabase(path: config.databasePath, busyTimeoutMilliseconds: 10_000),
                                        keysDirectory: config.keysDirectory)
        return IssuerServices(settings: IssuerSettings(config: config), storage: other,
                              sealingKeys: SealingKeyFiles(keysDirectory: config.keysDirectory), hasher: Self.fastHasher, clock: clock,
                              messages: PageCatalogues.real)
    }

    var keys: SigningKeys { services.signingKeys }
    /// Where the SQLite layout keeps a private key.
    func privateKeyPath(_ kid: String) -> String { config.keysDirectory + "/" + kid + ".pem" }
    var users: UserAccounts { services.users }
    var clients: ClientRegistry { services.clients }

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

/// The catalogues the pages are built from, as `ssoctl pages` makes them
/// of the repository's `www/locales/` (the standard brand: "Gatehouse").
enum PageCatalogues {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path
    static let tables: [String: [String: String]] = {
        do {
            return try PageRenderer(source: repository + "/www", output: "/nonexistent", brand: try BrandSettings(values: [:])).tables()
        } catch { fatalError("cannot read \(repository)/www/locales: \(error)") }
    }()
    static let real: MessageCatalogue = {
        do { return try MessageCatalogue(tables: tables, defaultLanguage: "en") } catch { fatalError("\(error)") }
    }()
    static var english: Messages { real.messages("en") }
    static var german: Messages { real.messages("de") }
}

extension UserAccounts {
    /// Marks a user disabled and nothing else (AccountChanges.disable also
    /// ends the sessions): what a test needs to see one rule alone.
    func disable(email: String) throws {
        guard let user = try find(email: email) else { throw ValidationError("no user with email \(email)") }
        try storage.write { try $0.users.setDisabled(true, userID: user.id) }
    }
}
