import FoundationEssentials
import Glibc
import IssuerStorage
import SQLiteClient

/// `signing_keys` (metadata and public keys) plus one private key file per
/// kid, `<keysDirectory>/<kid>.pem`, mode 0600, never in the database.
final class SQLiteSigningKeyStore: SigningKeyStore {
    let database: SQLiteDatabase
    let keysDirectory: String

    init(database: SQLiteDatabase, keysDirectory: String) {
        self.database = database
        self.keysDirectory = keysDirectory
    }

    func all() throws -> [StoredSigningKey] {
        try database.query("SELECT kid, public_pem, created_at, activates_at, retired_at, alg FROM signing_keys ORDER BY activates_at DESC, rowid DESC")
            .map { StoredSigningKey(kid: $0.string(0), publicPEM: $0.string(1), createdAt: $0.int(2), activatesAt: $0.int(3),
                                    retiredAt: $0.optionalInt(4), algorithm: $0.string(5)) }
    }

    func privateKeyPEM(kid: String) throws -> [UInt8]? {
        guard KeyFileName.isSafe(kid) else { return nil }
        return FileManager.default.contents(atPath: privateKeyPath(kid)).map { Array($0) }
    }

    /// The file first (written 0600 then renamed into place), then the row:
    /// a key is never published before its private part exists.
    func insert(_ key: StoredSigningKey, privateKeyPEM: [UInt8]) throws {
        guard KeyFileName.isSafe(key.kid) else { throw SQLiteError(code: 1, message: "unsafe kid \(key.kid.debugDescription)") }
        try writePrivateKey(privateKeyPEM, kid: key.kid)
        do {
            try database.execute("INSERT INTO signing_keys (kid, public_pem, created_at, activates_at, alg) VALUES (?, ?, ?, ?, ?)",
                                 [.text(key.kid), .text(key.publicPEM), .integer(key.createdAt), .integer(key.activatesAt),
                                  .text(key.algorithm)])
        } catch {
            unlink(privateKeyPath(key.kid))
            throw error
        }
    }

    func retire(kid: String, at now: Int64) throws {
        try database.execute("UPDATE signing_keys SET retired_at = ? WHERE kid = ?", [.integer(now), .text(kid)])
        if KeyFileName.isSafe(kid) { unlink(privateKeyPath(kid)) }
    }

    func privateKeyPath(_ kid: String) -> String { keysDirectory + "/" + kid + ".pem" }

    /// Writes to a temporary file created 0600, then renames it into place,
    /// so the key is never readable by others, not even for a moment.
    private func writePrivateKey(_ pem: [UInt8], kid: String) throws {
        try FileManager.default.createDirectory(atPath: keysDirectory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        let temporary = privateKeyPath(kid) + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_EXCL, 0o600)
        guard fd >= 0 else { throw SQLiteError(code: 10, message: "cannot create \(temporary): errno \(errno)") }
        let written = pem.withUnsafeBytes { write(fd, $0.baseAddress, pem.count) }
        let synced = fsync(fd)
        close(fd)
        guard written == pem.count, synced == 0, rename(temporary, privateKeyPath(kid)) == 0 else {
            unlink(temporary)
            throw SQLiteError(code: 10, message: "cannot write \(privateKeyPath(kid))")
        }
    }
}

/// A kid names a file: RFC 7638 thumbprints are base64url, so anything
/// else (a slash, a dot, nothing) is never turned into a path.
enum KeyFileName {
    static func isSafe(_ kid: String) -> Bool {
        (1...128).contains(kid.utf8.count) && kid.utf8.allSatisfy {
            (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) || $0 == 0x2D || $0 == 0x5F
        }
    }
}
