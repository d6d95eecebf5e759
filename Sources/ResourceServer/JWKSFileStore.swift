import FoundationEssentials
import Glibc
import SSOCore

/// Where a `JWKSCache` keeps its last good key set across restarts, so a
/// restarted resource server keeps validating while the issuer is down.
public protocol JWKSPersisting {
    /// The saved set and when it was saved (seconds since 1970), if any.
    func load() -> (keySet: JWKSet, savedAt: Int)?
    func save(_ keySet: JWKSet) throws
}

/// A JWKS file (`$GATEHOUSE_HOME/cache/jwks.json`), shared by every resource
/// server process of the home. Public keys only, so nothing secret.
public struct JWKSFileStore: JWKSPersisting {
    /// A saved set larger than this is not ours; it is ignored.
    static let maximumBytes = 256 * 1024
    public let path: String

    public init(path: String) { self.path = path }

    public func load() -> (keySet: JWKSet, savedAt: Int)? {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
              let size = Self.byteCount(attributes[.size]), size <= Self.maximumBytes,
              let modified = attributes[.modificationDate] as? Date,
              let data = FileManager.default.contents(atPath: path),
              let keySet = try? JSON.decoder.decode(JWKSet.self, from: data) else { return nil }
        return (keySet, Int(modified.timeIntervalSince1970))
    }

    /// The file size attribute, whatever integer type the Foundation in use
    /// reports it as (FoundationEssentials: UInt64; full Foundation boxes
    /// it as Int): a cast to one type alone never read the saved set back.
    static func byteCount(_ value: Any?) -> Int? {
        switch value {
        case let size as Int: size
        case let size as UInt64: Int(exactly: size)
        case let size as UInt: Int(exactly: size)
        case let size as Int64: Int(exactly: size)
        default: nil
        }
    }

    /// Writes a process-private temporary file and renames it over the old
    /// one: rename is atomic, so a reader (another process starting) sees
    /// the old set or the new one, never half a file.
    public func save(_ keySet: JWKSet) throws {
        let directory = parentDirectory(of: path)
        if !directory.isEmpty { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) }
        let temporary = "\(path).\(getpid()).tmp"
        let data = Data(try JSON.encode(keySet))
        guard FileManager.default.createFile(atPath: temporary, contents: data, attributes: [.posixPermissions: 0o644]) else {
            throw JWKSFetchError("cannot write \(temporary)")
        }
        guard rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw JWKSFetchError("cannot rename \(temporary) to \(path): \(reason)")
        }
    }
}
