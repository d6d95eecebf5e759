import Foundation
import SSOCore
#if canImport(Glibc)
import Glibc
#endif

/// The token file: JSON, mode 0600 from the moment it exists, replaced
/// atomically so a crash leaves the old tokens or the new ones, never half.
struct TokenFile {
    let path: String

    /// `$XDG_CONFIG_HOME/gatehouse-login/tokens.json`, `~/.config/...` by default.
    static var defaultPath: String {
        let environment = ProcessInfo.processInfo.environment
        let base = environment["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? ((environment["HOME"] ?? NSHomeDirectory()) + "/.config")
        return base + "/gatehouse-login/tokens.json"
    }

    var exists: Bool { access(path, F_OK) == 0 }

    func load() throws -> StoredTokens {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else {
            if errno == ENOENT { throw ToolError("not signed in: no token file at \(path) (run `gatehouse-login login`)") }
            throw ToolError("cannot open \(path): \(String(cString: strerror(errno)))")
        }
        let handle = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
        var info = stat()
        if fstat(fd, &info) == 0, info.st_mode & 0o077 != 0 {
            Console.error(String(format: "gatehouse-login: warning: %@ has mode %o; others may read your tokens (chmod 600 it)",
                                 path, info.st_mode & 0o777))
        }
        let data = try handle.readToEnd() ?? Data()
        do { return try JSON.decoder.decode(StoredTokens.self, from: data) } catch {
            throw ToolError("\(path) is not a gatehouse-login token file")
        }
    }

    /// Writes a temporary file created 0600 with O_EXCL (never a chmod after
    /// the fact, so there is no moment when others could read it), syncs it,
    /// and renames it over the old one.
    func save(_ tokens: StoredTokens) throws {
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty {
            do {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                        attributes: [.posixPermissions: 0o700])
            } catch { throw ToolError("cannot create \(directory): \(error.localizedDescription)") }
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let bytes = Array(try encoder.encode(tokens)) + [10]
        let temporary = "\(path).\(SecureRandom.token(byteCount: 6)).tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw ToolError("cannot create \(temporary): \(String(cString: strerror(errno)))") }
        var written = 0
        while written < bytes.count {
            let count = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + written, $0.count - written) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            written += count
        }
        let synced = fsync(fd) == 0
        close(fd)
        guard written == bytes.count, synced, rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw ToolError("cannot write \(path): \(reason)")
        }
    }

    func delete() throws {
        guard unlink(path) == 0 || errno == ENOENT else { throw ToolError("cannot delete \(path): \(String(cString: strerror(errno)))") }
    }
}
