import Foundation
import SSOCore

/// One signing key's metadata as the database holds it.
public struct SigningKeyRecord: Equatable, Sendable {
    public enum State: String, Sendable { case active, published, retired }
    public let kid: String
    public let state: State
    public let publicPEM: String
    public let createdAt: Int64
    public let retiredAt: Int64?
}

public struct KeyStoreError: Error, CustomStringConvertible {
    public let description: String
}

/// Signing keys: metadata (kid, state, dates, public PEM) in SQLite, private
/// keys in `$GATEHOUSE_HOME/keys/<kid>.pem` with mode 0600.
///
/// States: `active` signs new tokens (exactly one); `published` no longer
/// signs but stays in the JWKS so tokens it signed still verify; `retired`
/// is gone from the JWKS and its private key file is deleted.
public final class SigningKeyStore {
    let database: SQLiteDatabase
    let keysDirectory: String
    let clock: Clock

    public init(database: SQLiteDatabase, keysDirectory: String, clock: @escaping Clock = systemClock) {
        self.database = database
        self.keysDirectory = keysDirectory
        self.clock = clock
    }

    public func all() throws -> [SigningKeyRecord] {
        try database.query("SELECT kid, state, public_pem, created_at, retired_at FROM signing_keys ORDER BY created_at DESC, kid")
            .map(Self.record)
    }

    /// The keys the JWKS publishes: the active one first, then the published.
    public func publishedKeys() throws -> [SigningKeyRecord] {
        try database.query("""
            SELECT kid, state, public_pem, created_at, retired_at FROM signing_keys
            WHERE state IN ('active', 'published') ORDER BY state = 'active' DESC, created_at DESC, kid
            """).map(Self.record)
    }

    public func activeKID() throws -> String? {
        try database.queryOne("SELECT kid FROM signing_keys WHERE state = 'active'")?.string(0)
    }

    /// Loads the active private key from its file.
    public func activeSigningKey() throws -> (kid: String, key: RSAKey) {
        guard let kid = try activeKID() else { throw KeyStoreError(description: "no active signing key; run ssoctl keys rotate") }
        let pem = try Data(contentsOf: URL(fileURLWithPath: privateKeyPath(kid)))
        return (kid, try RSAKey.privateKey(pem: Array(pem)))
    }

    /// Makes a new key the active one; the previous active key stays
    /// published so tokens it signed keep verifying until they expire.
    @discardableResult
    public func rotate() throws -> String {
        let key = try RSAKey.generate(bits: 2048)
        let kid = try JWK.thumbprint(of: key)
        try writePrivateKey(key, kid: kid)
        let publicPEM = String(decoding: try key.publicKeyPEM(), as: UTF8.self)
        do {
            try database.transaction {
                try database.execute("UPDATE signing_keys SET state = 'published' WHERE state = 'active'")
                try database.execute("INSERT INTO signing_keys (kid, state, public_pem, created_at) VALUES (?, 'active', ?, ?)",
                                     [.text(kid), .text(publicPEM), .integer(clock())])
            }
        } catch {
            try? FileManager.default.removeItem(atPath: privateKeyPath(kid))
            throw error
        }
        return kid
    }

    /// Takes a published key out of the JWKS and deletes its private key.
    /// The active key cannot be retired: rotate first.
    public func retire(kid: String) throws {
        guard let row = try database.queryOne("SELECT state FROM signing_keys WHERE kid = ?", [.text(kid)]) else {
            throw KeyStoreError(description: "no key with kid \(kid)")
        }
        switch row.string(0) {
        case "active": throw KeyStoreError(description: "\(kid) is the active key; rotate first, then retire it")
        case "retired": throw KeyStoreError(description: "\(kid) is already retired")
        default: break
        }
        try database.execute("UPDATE signing_keys SET state = 'retired', retired_at = ? WHERE kid = ?", [.integer(clock()), .text(kid)])
        try? FileManager.default.removeItem(atPath: privateKeyPath(kid))
    }

    func privateKeyPath(_ kid: String) -> String { keysDirectory + "/" + kid + ".pem" }

    /// Writes the PEM to a temporary file created 0600, then renames it into
    /// place, so the key is never readable by others, not even for a moment.
    private func writePrivateKey(_ key: RSAKey, kid: String) throws {
        try FileManager.default.createDirectory(atPath: keysDirectory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        let pem = try key.privateKeyPEM()
        let temporary = privateKeyPath(kid) + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_EXCL, 0o600)
        guard fd >= 0 else { throw KeyStoreError(description: "cannot create \(temporary): errno \(errno)") }
        let written = pem.withUnsafeBytes { write(fd, $0.baseAddress, pem.count) }
        let synced = fsync(fd)
        close(fd)
        guard written == pem.count, synced == 0, rename(temporary, privateKeyPath(kid)) == 0 else {
            unlink(temporary)
            throw KeyStoreError(description: "cannot write \(privateKeyPath(kid))")
        }
    }

    static func record(_ row: SQLiteRow) -> SigningKeyRecord {
        SigningKeyRecord(kid: row.string(0), state: SigningKeyRecord.State(rawValue: row.string(1)) ?? .retired,
                         publicPEM: row.string(2), createdAt: row.int(3), retiredAt: row.optionalInt(4))
    }
}
