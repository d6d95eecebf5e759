import FoundationEssentials
import IssuerStorageSQLite
import IssuerStoragePostgreSQL
import PostgreSQLClient
import SSOCore

/// A home that ran on SQLite, pointed at a PostgreSQL database that holds
/// nothing yet, would start there as a new, empty issuer: a new demo
/// password, and its users, clients and signing keys out of sight. Every
/// process that initialises (`ssoctl setup`, which Scripts/run runs first,
/// the responders, the other ssoctl commands) refuses that before anything
/// is created in PostgreSQL, and names the way over: `ssoctl migrate`.
///
/// A SQLite file with no rows (only the schema, or a file left empty)
/// holds nothing to lose: PostgreSQL starts fresh. So does a PostgreSQL
/// database that already holds state: the SQLite file beside it (after a
/// migration, say) is no longer read.
enum SQLiteStateLeftBehind {
    static func refuseToStartEmpty(_ config: GatehouseConfig, on connection: PostgreSQLConnection) throws {
        // The cheap tests first: most homes on PostgreSQL never had a file.
        guard FileManager.default.fileExists(atPath: config.databasePath) else { return }
        do {
            if try PostgreSQLIssuerState.holdsState(connection) { return }
        } catch let error as PostgreSQLError where error.isTemporary {
            // Out of reach: a responder answers 503 until it is back, and
            // `ssoctl setup`, which creates the demo data, cannot run either.
            return
        }
        let holdsState: Bool
        do {
            holdsState = try SQLiteIssuerExport(databasePath: config.databasePath, keysDirectory: config.keysDirectory).holdsState()
        } catch {
            throw ConfigError("cannot tell whether \(config.databasePath) holds this issuer's state (\(error)); GATEHOUSE_DATABASE_URL "
                              + "names a PostgreSQL database that holds none. Move the file away if it holds nothing to keep.")
        }
        guard holdsState else { return }
        throw ConfigError(message(config))
    }

    static func message(_ config: GatehouseConfig) -> String {
        "\(config.databasePath) holds this issuer's state (users, clients, signing keys), but GATEHOUSE_DATABASE_URL names a "
            + "PostgreSQL database that holds none: starting there would start a new, empty issuer. Copy the state first with "
            + "ssoctl migrate --to \"$GATEHOUSE_DATABASE_URL\" (docs/DEPLOY.md, \"From SQLite to PostgreSQL\"), "
            + "or unset GATEHOUSE_DATABASE_URL to stay on SQLite."
    }
}
