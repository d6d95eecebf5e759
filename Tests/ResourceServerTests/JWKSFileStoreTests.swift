import Foundation
import XCTest
@testable import ResourceServer
import SSOCore

final class JWKSFileStoreTests: XCTestCase {
    var directory: TemporaryDirectory!

    override func setUpWithError() throws { directory = try TemporaryDirectory() }
    override func tearDown() { directory.remove() }

    func testRoundTripCreatesTheFolderAndLeavesNoTemporaryFile() throws {
        let store = JWKSFileStore(path: directory.path + "/cache/jwks.json")
        XCTAssertNil(store.load())
        try store.save(TestKeys.issuerSet)
        let loaded = try XCTUnwrap(store.load())
        XCTAssertEqual(loaded.keySet, TestKeys.issuerSet)
        XCTAssertLessThanOrEqual(abs(loaded.savedAt - Int(Date().timeIntervalSince1970)), 5)
        try store.save(TestKeys.rotatedSet)
        XCTAssertEqual(store.load()?.keySet, TestKeys.rotatedSet)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.path + "/cache"), ["jwks.json"])
    }

    /// The responders link FoundationEssentials, whose size attribute is a
    /// UInt64; these tests run with full Foundation (Int). Every integer
    /// type is a size, or a started API would never find its saved set.
    func testTheSizeIsReadWhateverIntegerTypeFoundationGivesIt() {
        XCTAssertEqual(JWKSFileStore.byteCount(UInt64(42)), 42)
        XCTAssertEqual(JWKSFileStore.byteCount(42), 42)
        XCTAssertEqual(JWKSFileStore.byteCount(UInt(42)), 42)
        XCTAssertEqual(JWKSFileStore.byteCount(Int64(42)), 42)
        XCTAssertNil(JWKSFileStore.byteCount(UInt64.max))
        XCTAssertNil(JWKSFileStore.byteCount("42"))
        XCTAssertNil(JWKSFileStore.byteCount(nil))
    }

    func testSavedFileIsAPlainJWKSet() throws {
        let path = directory.path + "/jwks.json"
        try JWKSFileStore(path: path).save(TestKeys.issuerSet)
        let data = try XCTUnwrap(FileManager.default.contents(atPath: path))
        XCTAssertEqual(try JSON.decoder.decode(JWKSet.self, from: data), TestKeys.issuerSet)
    }

    func testAgeComesFromTheFileTime() throws {
        let path = directory.path + "/jwks.json"
        try JWKSFileStore(path: path).save(TestKeys.issuerSet)
        let old = Date(timeIntervalSince1970: 1_700_000_000)
        try FileManager.default.setAttributes([.modificationDate: old], ofItemAtPath: path)
        XCTAssertEqual(JWKSFileStore(path: path).load()?.savedAt, 1_700_000_000)
    }

    func testGarbageOrHugeFilesAreIgnored() throws {
        let path = directory.path + "/jwks.json"
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data("not json".utf8)))
        XCTAssertNil(JWKSFileStore(path: path).load())
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(repeating: 0x20, count: 300 * 1024)))
        XCTAssertNil(JWKSFileStore(path: path).load())
    }

    func testUnwritableLocationThrowsInsteadOfCrashing() {
        XCTAssertThrowsError(try JWKSFileStore(path: "/proc/gatehouse/jwks.json").save(TestKeys.issuerSet))
    }
}
