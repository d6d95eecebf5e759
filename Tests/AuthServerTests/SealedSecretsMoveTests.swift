import Foundation
import XCTest
@testable import AuthServer
import IssuerStorage
import SSOCore

/// `ssoctl migrate` seals again what SQLite's key files sealed, under the
/// keys PostgreSQL derives from the master key: the issuer then opens it
/// as if it had sealed it there, and nothing opens with the wrong data.
final class SealedSecretsMoveTests: XCTestCase {
    var directory = ""
    var files: SealingKeyFiles!
    let derived = DerivedSealingKeys(masterKey: [UInt8](repeating: 3, count: 32))

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-reseal-\(UUID().uuidString)").path
        files = SealingKeyFiles(keysDirectory: directory + "/keys")
    }

    override func tearDown() { try? FileManager.default.removeItem(atPath: directory) }

    func testATOTPSeedOpensUnderTheNewKeysForItsUserOnly() throws {
        let seed = Array("12345678901234567890".utf8)
        let sealed = try TOTPSecretSealer(keys: files).seal(seed, userID: 5)
        let moved = try SealedSecretsMove(from: files, to: derived).reseal(sealed, as: .totpSeed(userID: 5))
        XCTAssertNotEqual(moved, sealed)
        XCTAssertEqual(try TOTPSecretSealer(keys: derived).open(moved, userID: 5), seed)
        XCTAssertThrowsError(try TOTPSecretSealer(keys: files).open(moved, userID: 5), "no longer under the old key")
        XCTAssertThrowsError(try SealedSecretsMove(from: files, to: derived).reseal(sealed, as: .totpSeed(userID: 6)),
                             "a seed moved to another user's row does not open")
    }

    func testARefreshSuccessorOpensUnderTheNewKeyForItsSpentTokenOnly() throws {
        let successor = Array("successor-token".utf8)
        let spent = SecretHash.of("spent-token")
        let old = try XCTUnwrap(files.key(.refreshSuccessor, create: true))
        let sealed = try RefreshSuccessorSealing.seal(successor, key: old, spentTokenHash: spent)
        let move = SealedSecretsMove(from: files, to: derived)
        let moved = try move.reseal(sealed, as: .refreshSuccessor(spentTokenHash: spent))
        let new = try XCTUnwrap(derived.key(.refreshSuccessor, create: false))
        XCTAssertEqual(try RefreshSuccessorSealing.open(moved, key: new, spentTokenHash: spent), successor)
        XCTAssertThrowsError(try move.reseal(sealed, as: .refreshSuccessor(spentTokenHash: SecretHash.of("another"))))
    }

    func testAMissingOldKeyFailsInsteadOfMakingANewOne() throws {
        XCTAssertThrowsError(try SealedSecretsMove(from: files, to: derived).reseal([1, 2, 3], as: .refreshSuccessor(spentTokenHash: [1])))
        XCTAssertThrowsError(try SealedSecretsMove(from: files, to: derived).reseal([1, 2, 3], as: .totpSeed(userID: 1)))
        XCTAssertFalse(FileManager.default.fileExists(atPath: files.path(.refreshSuccessor)), "the source's keys are only read")
        XCTAssertFalse(FileManager.default.fileExists(atPath: files.path(.totp)))
    }
}
