import FoundationEssentials
import Glibc
import SSOCore

/// Ties the DPoP replay cache's file to the boot that wrote it, so that its
/// commits need not be synced to disk.
///
/// A synced checkpoint (`PRAGMA synchronous = NORMAL`) flushed the file
/// and its WAL every few hundred claims, and those flushes were most of a
/// DPoP call's cost at the API (docs/PERFORMANCE.md, "DPoP and PAR").
/// Unsynced (`OFF`), every claim still reaches the kernel before the request
/// is answered, so a process that crashes loses nothing; only a crash of the
/// operating system can leave the file half-written. So the file's boot is
/// recorded beside it (`<path>.boot`, the kernel's boot id), and the first
/// process of another boot starts an empty cache. What that forgets is what
/// an in-memory replay cache forgets on every restart: proofs accepted in
/// the 180 s before the machine went down, once more, if it is back within
/// them.
public enum DPoPReplayCacheBoot {
    static let bootIDPath = "/proc/sys/kernel/random/boot_id"

    /// The running kernel's boot id, or nil where /proc does not have it.
    public static func currentBootID() -> String? {
        guard let data = FileManager.default.contents(atPath: bootIDPath) else { return nil }
        let text = String(decoding: data, as: UTF8.self).trimmingASCIIWhitespace(newlines: true)
        return text.isEmpty || text.utf8.count > 64 ? nil : text
    }

    /// Prepares the database at `path` for this boot, under an exclusive
    /// lock on `<path>.lock` so processes starting at once agree. Returns
    /// whether the cache may commit without syncing: false when the boot id
    /// cannot be read (the file then stays synced, as before).
    ///
    /// - A `.boot` file naming another boot: the database, its WAL and its
    ///   shared-memory index are removed (they may be torn), then this boot
    ///   is recorded.
    /// - No `.boot` file: the database, if any, was written synced (by a
    ///   version before this one) and is kept; this boot is recorded.
    /// - This boot: nothing to do.
    public static func prepare(path: String, bootID: String? = currentBootID()) throws -> Bool {
        guard let bootID else { return false }
        let lock = open(path + ".lock", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard lock >= 0 else { throw DPoPReplayCacheBootError("cannot open \(path).lock: errno \(errno)") }
        defer { close(lock) }
        while flock(lock, LOCK_EX) != 0 {
            guard errno == EINTR else { throw DPoPReplayCacheBootError("cannot lock \(path).lock: errno \(errno)") }
        }
        let recorded = FileManager.default.contents(atPath: path + ".boot")
            .map { String(decoding: $0, as: UTF8.self).trimmingASCIIWhitespace(newlines: true) }
        if recorded == bootID { return true }
        if recorded != nil {
            for suffix in ["", "-wal", "-shm"] {
                guard unlink(path + suffix) == 0 || errno == ENOENT else {
                    throw DPoPReplayCacheBootError("cannot remove \(path)\(suffix): errno \(errno)")
                }
            }
        }
        try record(bootID, at: path + ".boot")
        return true
    }

    /// Written through a synced temporary file and rename, and the folder
    /// synced too: the record must be on disk before the first unsynced
    /// commit, or a crash could leave unsynced pages with no record, and
    /// the next boot would keep them.
    static func record(_ bootID: String, at path: String) throws {
        let temporary = "\(path).\(getpid()).tmp"
        let bytes = Array((bootID + "\n").utf8)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw DPoPReplayCacheBootError("cannot create \(temporary): errno \(errno)") }
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, bytes.count) }
        let synced = fsync(fd)
        close(fd)
        guard written == bytes.count, synced == 0, rename(temporary, path) == 0 else {
            unlink(temporary)
            throw DPoPReplayCacheBootError("cannot write \(path): errno \(errno)")
        }
        let parent = parentDirectory(of: path)
        let folder = open(parent.isEmpty ? "." : parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard folder >= 0 else { throw DPoPReplayCacheBootError("cannot open the folder of \(path): errno \(errno)") }
        defer { close(folder) }
        guard fsync(folder) == 0 else { throw DPoPReplayCacheBootError("cannot sync the folder of \(path): errno \(errno)") }
    }
}

struct DPoPReplayCacheBootError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
