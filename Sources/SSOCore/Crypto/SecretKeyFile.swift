import FoundationEssentials
import Glibc

/// A 32-byte server secret in a file of its own (base64url text, mode 0600)
/// beside the signing keys: with SQLite, one file per purpose, each sealing
/// data at rest with AES-256-GCM; with PostgreSQL, the one master key the
/// others are derived from. None of them is ever in the database.
public enum SecretKeyFile {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// The key, or nil when the file does not exist yet.
    public static func load(path: String) throws -> [UInt8]? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        let text = String(decoding: data, as: UTF8.self).trimmingASCIIWhitespace(newlines: true)
        guard let key = Base64URL.decode(text), key.count == AESGCM.keyByteCount else {
            throw Failure(description: "\(path) does not hold a 32-byte base64url key")
        }
        return key
    }

    /// Reads the key, creating it first when absent. Created through a
    /// unique temporary file (0600) and link(2), which fails if another
    /// process won the race; the winner's key is then read, so processes
    /// starting at once agree on one key and none reads a half-written file.
    public static func loadOrCreate(path: String) throws -> [UInt8] {
        if let existing = try load(path: path) { return existing }
        let directory = parentDirectory(of: path)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        let text = Array((Base64URL.encode(SecureRandom.bytes(AESGCM.keyByteCount)) + "\n").utf8)
        let temporary = path + ".\(getpid()).\(SecureRandom.token(byteCount: 6)).tmp"
        let fd = Glibc.open(temporary, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard fd >= 0 else { throw Failure(description: "cannot create \(temporary): errno \(errno)") }
        let written = text.withUnsafeBytes { write(fd, $0.baseAddress, text.count) }
        let synced = fsync(fd)
        close(fd)
        defer { unlink(temporary) }
        guard written == text.count, synced == 0 else { throw Failure(description: "cannot write \(temporary)") }
        if link(temporary, path) != 0 && errno != EEXIST { throw Failure(description: "cannot create \(path): errno \(errno)") }
        guard let created = try load(path: path) else { throw Failure(description: "\(path) vanished after creation") }
        return created
    }
}
