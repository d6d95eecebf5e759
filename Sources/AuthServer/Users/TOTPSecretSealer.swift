import Foundation
import SSOCore

public struct TOTPSealError: Error, CustomStringConvertible {
    public let description: String
}

/// Seals TOTP seeds for the database with AES-256-GCM under a key kept
/// beside the signing keys (`keys/totp-seal.key`, mode 0600), never in the
/// database. A seed cannot be stored as a hash (the issuer must compute
/// codes from it), and a copy of the database alone (a backup, a dump)
/// must not hand out every user's second factor. The user id is the
/// authenticated data, so a sealed seed moved to another user's row fails.
public final class TOTPSecretSealer {
    public static let fileName = "totp-seal.key"
    let keysDirectory: String
    private var cachedKey: [UInt8]?

    public init(keysDirectory: String) { self.keysDirectory = keysDirectory }

    var keyPath: String { keysDirectory + "/" + Self.fileName }

    /// Seals `secret` for `userID`, creating the key on first use.
    public func seal(_ secret: [UInt8], userID: Int64) throws -> [UInt8] {
        try AESGCM.seal(secret, key: key(creatingIfMissing: true), authenticating: Self.context(userID))
    }

    public func open(_ sealed: [UInt8], userID: Int64) throws -> [UInt8] {
        try AESGCM.open(sealed, key: key(creatingIfMissing: false), authenticating: Self.context(userID))
    }

    static func context(_ userID: Int64) -> [UInt8] { Array("gatehouse-totp-v1 user \(userID)".utf8) }

    /// The key, read once per process. Created with a unique temporary file
    /// (0600) and link(2), which fails if another process won the race; the
    /// winner's key is then read, so every process agrees on one key.
    private func key(creatingIfMissing: Bool) throws -> [UInt8] {
        if let cachedKey { return cachedKey }
        if let existing = try readKey() {
            cachedKey = existing
            return existing
        }
        guard creatingIfMissing else { throw TOTPSealError(description: "\(keyPath) is missing: TOTP seeds cannot be opened") }
        try FileManager.default.createDirectory(atPath: keysDirectory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        let text = Array((Base64URL.encode(SecureRandom.bytes(AESGCM.keyByteCount)) + "\n").utf8)
        let temporary = keyPath + ".\(getpid()).\(SecureRandom.token(byteCount: 6)).tmp"
        let fd = Glibc.open(temporary, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard fd >= 0 else { throw TOTPSealError(description: "cannot create \(temporary): errno \(errno)") }
        let written = text.withUnsafeBytes { write(fd, $0.baseAddress, text.count) }
        let synced = fsync(fd)
        close(fd)
        defer { unlink(temporary) }
        guard written == text.count, synced == 0 else { throw TOTPSealError(description: "cannot write \(temporary)") }
        if link(temporary, keyPath) != 0 && errno != EEXIST {
            throw TOTPSealError(description: "cannot create \(keyPath): errno \(errno)")
        }
        guard let created = try readKey() else { throw TOTPSealError(description: "\(keyPath) vanished after creation") }
        cachedKey = created
        return created
    }

    private func readKey() throws -> [UInt8]? {
        guard let data = FileManager.default.contents(atPath: keyPath) else { return nil }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard let key = Base64URL.decode(text), key.count == AESGCM.keyByteCount else {
            throw TOTPSealError(description: "\(keyPath) does not hold a 32-byte base64url key")
        }
        return key
    }
}
