import Foundation
import XCTest
@testable import AuthServer
import IssuerComposition
import IssuerStorage
@testable import IssuerStorageSQLite
import SQLiteClient
import SSOCore

/// Pre-published rotation: a new key is in the JWKS before it signs, the old
/// one stays until its tokens have expired, a retired key is gone.
final class KeyRotationTests: SignInTestCase {
    typealias H = SignInHarness

    var keys: SigningKeys {
        issuer.keys
    }

    func jwksKIDs() throws -> [String?] {
        let responder = JWKSResponder(keys: keys)
        return try JSONDecoder().decode(JWKSet.self, from: Data(responder.respond(to: Request(method: "GET", path: "/")).body)).keys.map(\.kid)
    }

    func signingKID() throws -> String? {
        let signedIn = try harness.signIn()
        let body = harness.tokenPOST(H.codeExchange(code: signedIn.code)).jsonObject()
        return try harness.verifiedJWT(try XCTUnwrap(body["access_token"] as? String)).header.kid
    }

    /// The shortest activation delay covers how long nginx's copy of the
    /// JWKS can lag behind the responder, read from the shipped snippet
    /// (both layouts include it): the copy's lifetime plus the open file
    /// cache's revalidation, plus a second for whole-second activation times.
    func testTheShortestActivationDelayCoversNginxsCopyOfTheJWKS() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let snippet = try String(contentsOf: root.appendingPathComponent("deploy/nginx/snippets/gatehouse-wellknown-cache.conf"), encoding: .utf8)
        func seconds(_ directive: String) throws -> Int {
            let line = try XCTUnwrap(snippet.split(separator: "\n").first { $0.hasPrefix(directive + " ") }, directive)
            return try XCTUnwrap(Int(line.split(separator: " ").last!.dropLast(2)), String(line))  // "2s;"
        }
        let lag = try seconds("fastcgi_cache_valid") + seconds("open_file_cache_valid")
        XCTAssertEqual(lag, 3)
        XCTAssertGreaterThanOrEqual(SigningKeys.minimumActivationDelay, lag + 1)
        let kid = try keys.rotate(activationDelay: SigningKeys.minimumActivationDelay)
        XCTAssertNotEqual(try signingKID(), kid, "published, not signing yet")
        clock.advance(Int64(SigningKeys.minimumActivationDelay))
        XCTAssertEqual(try signingKID(), kid)
    }

    func testANewKeyIsPublishedBeforeItSignsThenTakesOver() throws {
        let first = try XCTUnwrap(keys.activeKID())
        let next = try keys.rotate(activationDelay: 600)
        XCTAssertEqual(try jwksKIDs(), [first, next], "published at once, active key first")
        XCTAssertEqual(try keys.all().first { $0.kid == next }?.state, .next)
        XCTAssertEqual(try signingKID(), first, "not signing yet")
        clock.advance(600)
        XCTAssertEqual(try signingKID(), next, "signs from its activation time, without a restart")
        XCTAssertEqual(try keys.all().first { $0.kid == first }?.state, .published)
        XCTAssertEqual(try jwksKIDs(), [next, first], "the old key stays while its tokens may live")
        clock.advance(Int64(issuer.config.signingKeyRetention) + 1)
        XCTAssertEqual(try keys.all().first { $0.kid == first }?.state, .expired)
        XCTAssertEqual(try jwksKIDs(), [next], "gone once every token it signed has expired")
    }

    func testRetiringTheActiveKeyIsRefusedAndAPublishedOneDisappears() throws {
        let first = try XCTUnwrap(keys.activeKID())
        XCTAssertThrowsError(try keys.retire(kid: first))
        let second = try keys.rotate()
        XCTAssertEqual(try keys.activeKID(), second)
        try keys.retire(kid: first)
        XCTAssertEqual(try jwksKIDs(), [second])
        XCTAssertEqual(try keys.all().first { $0.kid == first }?.state, .retired)
        XCTAssertFalse(FileManager.default.fileExists(atPath: issuer.privateKeyPath(first)))
    }

    func testSealingKeyFileIsCreatedOnceOwnerOnly() throws {
        let path = issuer.config.keysDirectory + "/test-seal.key"
        let first = try SecretKeyFile.loadOrCreate(path: path)
        XCTAssertEqual(try SecretKeyFile.loadOrCreate(path: path), first)
        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int, 0o600)
        XCTAssertEqual(first.count, 32)
        try Data("short".utf8).write(to: URL(fileURLWithPath: path + "2"))
        XCTAssertThrowsError(try SecretKeyFile.loadOrCreate(path: path + "2"))
    }

    // MARK: More than one algorithm

    /// Each algorithm has its own active key and rotation; a client's
    /// tokens are signed with its --id-token-alg, and the JWKS lists all.
    func testEachAlgorithmRotatesOnItsOwnAndSignsItsClientsTokens() throws {
        let rs256 = try XCTUnwrap(keys.activeKID())
        var changes = ClientChanges()
        changes.idTokenAlgorithm = "ES256"
        XCTAssertThrowsError(try issuer.clients.update(clientID: "mobile-app-001", changes), "no ES256 key yet") { error in
            XCTAssertTrue("\(error)".contains("ssoctl keys rotate --alg ES256"), "\(error)")
        }
        let es256 = try keys.rotate(activationDelay: 0, algorithm: .es256)
        let edDSA = try keys.rotate(activationDelay: 0, algorithm: .edDSA)
        XCTAssertEqual(try keys.activeKID(), rs256, "RS256 stays the default's active key")
        XCTAssertEqual(try keys.activeKID(algorithm: .es256), es256)
        XCTAssertEqual(try keys.activeAlgorithms(), [.rs256, .es256, .edDSA])
        XCTAssertEqual(try jwksKIDs(), [rs256, es256, edDSA], "every active key, RS256's first")
        XCTAssertEqual(try signingKID(), rs256, "a client without --id-token-alg: RS256")

        try issuer.clients.update(clientID: "mobile-app-001", changes)
        XCTAssertEqual(try signingKID(), es256)
        changes.idTokenAlgorithm = "EdDSA"
        try issuer.clients.update(clientID: "mobile-app-001", changes)
        XCTAssertEqual(try signingKID(), edDSA)

        // A scheduled ES256 rotation moves ES256 only.
        let nextES256 = try keys.rotate(activationDelay: 600, algorithm: .es256)
        clock.advance(600)
        XCTAssertEqual(try keys.activeKID(algorithm: .es256), nextES256)
        XCTAssertEqual(try keys.all().first { $0.kid == es256 }?.state, .published)
        XCTAssertEqual(try keys.activeKID(), rs256)
        XCTAssertEqual(try keys.activeKID(algorithm: .edDSA), edDSA)
        XCTAssertThrowsError(try keys.retire(kid: edDSA), "the active EdDSA key cannot be retired")
        XCTAssertNoThrow(try keys.retire(kid: es256))
        changes.idTokenAlgorithm = "RS256"
        try issuer.clients.update(clientID: "mobile-app-001", changes)
        XCTAssertNil(try issuer.clients.find(clientID: "mobile-app-001")?.idTokenAlgorithm, "RS256 is stored as the default")
    }
}
