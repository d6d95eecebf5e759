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

    func testACacheWrittenSyncedBeforeAnyRecordIsKept() throws {
        try claimOne(syncsCheckpoints: true)
        XCTAssertNil(recordedBoot())
        XCTAssertTrue(try DPoPReplayCacheBoot.prepare(path: path, bootID: "boot-a"))
        XCTAssertEqual(try claimedCount(), 1, "an upgrade in place keeps the proofs already accepted")
        XCTAssertEqual(recordedBoot(), "boot-a\n")
    }

    func testWithoutABootIDTheCacheStaysSynced() throws {
        XCTAssertFalse(try DPoPReplayCacheBoot.prepare(path: path, bootID: nil))
        XCTAssertNil(recordedBoot())
        XCTAssertFalse(FileManager.default.fileExists(atPath: path + ".lock"))
        XCTAssertEqual(try SQLiteDPoPReplayCache(database: SQLiteDatabase(path: path)).synchronousMode, 1, "NORMAL")
        XCTAssertEqual(try SQLiteDPoPReplayCache(database: SQLiteDatabase(path: path), syncsCheckpoints: false).synchronousMode,
                       0, "OFF")
    }

    func testTheRunningKernelsBootIDIsRead() throws {
        let bootID = try XCTUnwrap(DPoPReplayCacheBoot.currentBootID())
        XCTAssertEqual(bootID.utf8.count, 36, bootID)
        XCTAssertEqual(DPoPReplayCacheBoot.currentBootID(), bootID)
    }
}
