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
    /// cannot be read (the file then stays synced).
    ///
    /// - A `.boot` record naming this boot: nothing to do.
    /// - Anything else, with the boot id read: the database, its WAL and its
    ///   shared-memory index are removed, then this boot is recorded. That
    ///   covers another boot's record, and also a missing or unreadable one:
    ///   a record renamed into place but not yet synced with its folder when
    ///   the machine went down is missing after the reboot, while the pages
    ///   written after it were unsynced too.
    /// - No boot id and no record: the file was only ever written synced
    ///   and is kept.
    /// - No boot id but a record (the boot id was readable before): the file
    ///   may be torn, so it is removed with the record.
    public static func prepare(path: String, bootID: String? = currentBootID()) throws -> Bool {
        let recordPath = path + ".boot"
        if bootID == nil, !entryExists(recordPath) { return false }
        let lock = open(path + ".lock", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard lock >= 0 else { throw DPoPReplayCacheBootError("cannot open \(path).lock: errno \(errno)") }
        defer { close(lock) }
        while flock(lock, LOCK_EX) != 0 {
            guard errno == EINTR else { throw DPoPReplayCacheBootError("cannot lock \(path).lock: errno \(errno)") }
        }
        if let bootID, recordedBoot(at: recordPath) == bootID { return true }
        for suffix in ["", "-wal", "-shm"] { try remove(path + suffix) }
        guard let bootID else {
            try remove(recordPath)
            try syncFolder(of: path)
            return false
        }
        try record(bootID, at: recordPath)
        return true
    }

    /// Unlinks `path`; one that is not there is already gone.
    static func remove(_ path: String) throws {
        guard unlink(path) == 0 || errno == ENOENT else { throw DPoPReplayCacheBootError("cannot remove \(path): errno \(errno)") }
    }

    static func entryExists(_ path: String) -> Bool {
        var status = stat()
        return lstat(path, &status) == 0
    }

    /// The boot named in the record, or nil when there is none or it is not
    /// a small regular file: a symbolic link (to the kernel's own boot id,
    /// say), a FIFO that would block the read while the lock is held, or
    /// anything larger than a boot id.
    static func recordedBoot(at path: String) -> String? {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return nil }
        var bytes = [UInt8](repeating: 0, count: 129)
        let count = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count > 0, count < bytes.count else { return nil }
        return String(decoding: bytes[..<count], as: UTF8.self).trimmingASCIIWhitespace(newlines: true)
    }

    /// Written through a synced temporary file and rename, and the folder
    /// synced too: the record must be on disk before the first unsynced
    /// commit. Only the holder of the lock writes it, so the temporary name
    /// is fixed; whatever a killed process left there is removed first, and
    /// the file is created anew.
    static func record(_ bootID: String, at path: String) throws {
        let temporary = path + ".tmp"
        let bytes = Array((bootID + "\n").utf8)
        try remove(temporary)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw DPoPReplayCacheBootError("cannot create \(temporary): errno \(errno)") }
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, bytes.count) }
        let synced = fsync(fd)
        close(fd)
        guard written == bytes.count, synced == 0, rename(temporary, path) == 0 else {
            unlink(temporary)
            throw DPoPReplayCacheBootError("cannot write \(path): errno \(errno)")
        }
        try syncFolder(of: path)
    }

    /// Makes the removals and renames in the file's folder durable.
    static func syncFolder(of path: String) throws {
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
