import Foundation
import XCTest
@testable import ResourceServer
import SQLiteClient
@testable import SSOCore

/// The replay cache's file is kept within the boot that wrote it and
/// started empty in another, since it commits without syncing.
final class DPoPReplayCacheBootTests: XCTestCase {
    var directory: TemporaryDirectory!
    var path: String { directory.path + "/dpop-proofs.sqlite" }

    override func setUpWithError() throws { directory = try TemporaryDirectory() }
    override func tearDown() { directory.remove() }

    /// One claimed proof in the cache, through a connection closed again.
    func claimOne(syncsCheckpoints: Bool) throws {
        let cache = try SQLiteDPoPReplayCache(database: SQLiteDatabase(path: path), syncsCheckpoints: syncsCheckpoints)
        XCTAssertTrue(try cache.claim(SHA256.hash("proof"), expiresAt: 1180, now: 1000))
    }

    func claimedCount() throws -> Int64 {
        try SQLiteDPoPReplayCache(database: SQLiteDatabase(path: path)).count()
    }

    func recordedBoot() -> String? {
        FileManager.default.contents(atPath: path + ".boot").map { String(decoding: $0, as: UTF8.self) }
    }

    func testWithinOneBootTheCacheIsKeptAndCommitsUnsynced() throws {
        XCTAssertTrue(try DPoPReplayCacheBoot.prepare(path: path, bootID: "boot-a"))
        try claimOne(syncsCheckpoints: false)
        XCTAssertTrue(try DPoPReplayCacheBoot.prepare(path: path, bootID: "boot-a"), "a process restarted in the same boot")
        XCTAssertEqual(try claimedCount(), 1)
        XCTAssertEqual(recordedBoot(), "boot-a\n")
    }

    func testAnotherBootStartsAnEmptyCache() throws {
        XCTAssertTrue(try DPoPReplayCacheBoot.prepare(path: path, bootID: "boot-a"))
        try claimOne(syncsCheckpoints: false)
        // What a crash may leave behind: a WAL and its index, torn.
        for suffix in ["-wal", "-shm"] {
            XCTAssertTrue(FileManager.default.createFile(atPath: path + suffix, contents: Data("torn".utf8)))
        }
        XCTAssertTrue(try DPoPReplayCacheBoot.prepare(path: path, bootID: "boot-b"))
        for suffix in ["", "-wal", "-shm"] {
            XCTAssertFalse(FileManager.default.fileExists(atPath: path + suffix), "dpop-proofs.sqlite\(suffix) is gone")
        }
        XCTAssertEqual(recordedBoot(), "boot-b\n")
        XCTAssertEqual(try claimedCount(), 0)
    }

    /// A record renamed into place but not yet synced with its folder is
    /// missing after a crash, while what was written after it is torn; a
    /// cache from a version before the record goes the same way, once.
    func testACacheWithNoRecordStartsEmpty() throws {
        try claimOne(syncsCheckpoints: true)
        XCTAssertNil(recordedBoot())
        XCTAssertTrue(try DPoPReplayCacheBoot.prepare(path: path, bootID: "boot-a"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: path), "the unrecorded cache is removed")
        XCTAssertEqual(recordedBoot(), "boot-a\n")
        XCTAssertEqual(try claimedCount(), 0)
    }

    func testWithoutABootIDTheCacheStaysSynced() throws {
        try claimOne(syncsCheckpoints: true)
        XCTAssertFalse(try DPoPReplayCacheBoot.prepare(path: path, bootID: nil))
        XCTAssertNil(recordedBoot())
        XCTAssertFalse(FileManager.default.fileExists(atPath: path + ".lock"))
        XCTAssertEqual(try claimedCount(), 1, "a cache only ever written synced is kept")
        XCTAssertEqual(try SQLiteDPoPReplayCache(database: SQLiteDatabase(path: path)).synchronousMode, 1, "NORMAL")
        XCTAssertEqual(try SQLiteDPoPReplayCache(database: SQLiteDatabase(path: path), syncsCheckpoints: false).synchronousMode,
                       0, "OFF")
    }

    /// The boot id was readable when the cache was written unsynced and is
    /// not now (/proc hidden after a crash, say): the file may be torn.
    func testWithoutABootIDARecordedCacheIsRemoved() throws {
        XCTAssertTrue(try DPoPReplayCacheBoot.prepare(path: path, bootID: "boot-a"))
        try claimOne(syncsCheckpoints: false)
        XCTAssertFalse(try DPoPReplayCacheBoot.prepare(path: path, bootID: nil))
        XCTAssertNil(recordedBoot(), "the record goes with the file")
        XCTAssertFalse(FileManager.default.fileExists(atPath: path))
        XCTAssertFalse(try DPoPReplayCacheBoot.prepare(path: path, bootID: nil), "and the next process keeps the synced file")
    }

    /// A link to a file naming this boot (the kernel's own boot id, say)
    /// would keep a torn cache for ever; only a regular file is a record.
    func testALinkedRecordIsNotARecord() throws {
        XCTAssertTrue(FileManager.default.createFile(atPath: directory.path + "/elsewhere", contents: Data("boot-a\n".utf8)))
        XCTAssertEqual(symlink(directory.path + "/elsewhere", path + ".boot"), 0)
        try claimOne(syncsCheckpoints: false)
        XCTAssertTrue(try DPoPReplayCacheBoot.prepare(path: path, bootID: "boot-a"))
        XCTAssertEqual(try claimedCount(), 0)
        var status = stat()
        XCTAssertEqual(lstat(path + ".boot", &status), 0)
        XCTAssertEqual(status.st_mode & S_IFMT, S_IFREG, "the link is replaced by a record")
        XCTAssertEqual(recordedBoot(), "boot-a\n")
    }

    /// A FIFO in the record's or the temporary file's place would block the
    /// process with the lock held, and every API process behind it.
    func testFIFOsInTheRecordsPlaceDoNotBlock() throws {
        XCTAssertEqual(mkfifo(path + ".boot", 0o600), 0)
        XCTAssertEqual(mkfifo(path + ".boot.tmp", 0o600), 0)
        XCTAssertTrue(try DPoPReplayCacheBoot.prepare(path: path, bootID: "boot-a"))
        XCTAssertEqual(recordedBoot(), "boot-a\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: path + ".boot.tmp"))
    }

    func testARecordLongerThanABootIDIsNotThisBoot() throws {
        let padded = "boot-a" + String(repeating: " ", count: 200) + "\n"
        XCTAssertTrue(FileManager.default.createFile(atPath: path + ".boot", contents: Data(padded.utf8)))
        try claimOne(syncsCheckpoints: false)
        XCTAssertTrue(try DPoPReplayCacheBoot.prepare(path: path, bootID: "boot-a"))
        XCTAssertEqual(try claimedCount(), 0)
        XCTAssertEqual(recordedBoot(), "boot-a\n")
    }

    func testTheRunningKernelsBootIDIsRead() throws {
        let bootID = try XCTUnwrap(DPoPReplayCacheBoot.currentBootID())
        XCTAssertEqual(bootID.utf8.count, 36, bootID)
        XCTAssertEqual(DPoPReplayCacheBoot.currentBootID(), bootID)
    }
}
