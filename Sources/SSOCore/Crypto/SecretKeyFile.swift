import Foundation

/// A 32-byte server secret in a file of its own (mode 0600), for keys that
/// seal data at rest (AES-256-GCM). Each purpose has its own file.
public enum SecretKeyFile {
    /// Reads the key, or creates it with O_EXCL when absent, so processes
    /// starting at once agree on one key.
    public static func loadOrCreate(path: String) throws -> [UInt8] {
        let fd = Glibc.open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        if fd >= 0 {
            let key = SecureRandom.bytes(32)
            let written = key.withUnsafeBytes { write(fd, $0.baseAddress, key.count) }
            let synced = fsync(fd)
            close(fd)
            guard written == key.count, synced == 0 else {
                unlink(path)
                throw OpenSSLError("cannot write key file \(path)")
            }
            return key
        }
        guard errno == EEXIST, let data = FileManager.default.contents(atPath: path), data.count == 32 else {
            throw OpenSSLError("cannot read key file \(path) (must hold exactly 32 bytes)")
        }
        return Array(data)
    }
}
