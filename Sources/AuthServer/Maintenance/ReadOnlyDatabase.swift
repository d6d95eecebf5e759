import FoundationEssentials
import SSOCore

/// The issuer database opened for looking only (doctor, stats): never
/// created, never migrated, never written.
public enum ReadOnlyDatabase {
    public struct OpenError: Error, CustomStringConvertible {
        public let description: String
    }

    /// A missing file is reported, not made; the first read proves the file
    /// is a database at all (opening alone does not).
    public static func open(_ path: String) throws -> SQLiteDatabase {
        guard FileManager.default.fileExists(atPath: path) else {
            throw OpenError(description: "no database at \(path) (Scripts/run or ssoctl setup creates it)")
        }
        do {
            let database = try SQLiteDatabase(path: path, readOnly: true)
            _ = try database.queryOne("SELECT count(*) FROM sqlite_schema")
            return database
        } catch {
            throw OpenError(description: "\(path): \(error)")
        }
    }
}
