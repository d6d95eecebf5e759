import Foundation
import XCTest
@testable import SSOCore

final class RSAAndJWTTests: XCTestCase {
    static let key = try! RSAKey.generate()

    func testSignVerifyAndTamper() throws {
        let message = Array("header.payload".utf8)
        let signature = try Self.key.signRS256(message)
        XCTAssertEqual(signature.count, 256)
        XCTAssertTrue(Self.key.verifyRS256(signature: signature, message: message))
        XCTAssertFalse(Self.key.verifyRS256(signature: signature, message: Array("header.payloaD".utf8)))
        var flipped = signature
        flipped[10] ^= 1
        XCTAssertFalse(Self.key.verifyRS256(signature: flipped, message: message))
        XCTAssertFalse(Self.key.verifyRS256(signature: [], message: message))
    }

    func testPEMRoundTripAndPublicOnlyKey() throws {
        let reloaded = try RSAKey.privateKey(pem: Self.key.privateKeyPEM())
        let publicOnly = try RSAKey.publicKey(pem: Self.key.publicKeyPEM())
        XCTAssertTrue(reloaded.hasPrivateKey)
        XCTAssertFalse(publicOnly.hasPrivateKey)
        let signature = try reloaded.signRS256([1, 2, 3])
        XCTAssertTrue(publicOnly.verifyRS256(signature: signature, message: [1, 2, 3]))
        XCTAssertEqual(publicOnly.bits, 2048)
        XCTAssertThrowsError(try RSAKey.privateKey(pem: Array("not a pem".utf8)))
    }

    func testRefusesShortRSAKeys() throws {
        let short = try RSAKey.generate(bits: 1024)
        XCTAssertThrowsError(try RSAKey.publicKey(pem: short.publicKeyPEM()))
    }

    /// The signature must verify with another implementation: openssl dgst.
    func testRS256SignatureVerifiesWithOpenSSLCommandLine() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-rs256-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let message = Array("eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9".utf8)
        try Data(Self.key.publicKeyPEM()).write(to: directory.appendingPathComponent("pub.pem"))
        try Data(message).write(to: directory.appendingPathComponent("msg"))
        try Data(Self.key.signRS256(message)).write(to: directory.appendingPathComponent("sig"))
        XCTAssertEqual(try runOpenSSL(in: directory, ["dgst", "-sha256", "-verify", "pub.pem", "-signature", "sig", "msg"]), 0)
        try Data(message + [0x21]).write(to: directory.appendingPathComponent("msg"))
        XCTAssertNotEqual(try runOpenSSL(in: directory, ["dgst", "-sha256", "-verify", "pub.pem", "-signature", "sig", "msg"]), 0)
    }

    /// And the other way: a signature made by openssl verifies here.
    func testOpenSSLCommandLineSignatureVerifiesHere() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-rs256b-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data(Self.key.privateKeyPEM()).write(to: directory.appendingPathComponent("key.pem"))
        try Data("hello".utf8).write(to: directory.appendingPathComponent("msg"))
        XCTAssertEqual(try runOpenSSL(in: directory, ["dgst", "-sha256", "-sign", "key.pem", "-out", "sig", "msg"]), 0)
        let signature = try Data(contentsOf: directory.appendingPathComponent("sig"))
        XCTAssertTrue(Self.key.verifyRS256(signature: Array(signature), message: Array("hello".utf8)))
    }

    private func runOpenSSL(in directory: URL, _ arguments: [String]) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = arguments
        process.currentDirectoryURL = directory
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// RFC 7638 §3.1: the thumbprint of the RFC 7517 example key.
    func testJWKThumbprintKnownAnswer() throws {
        let n = "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw"
        let key = try RSAKey.publicKey(modulus: Base64URL.decode(n)!, exponent: Base64URL.decode("AQAB")!)
        XCTAssertEqual(try JWK.thumbprint(of: key), "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs")
    }

    func testJWKRoundTrip() throws {
        let jwk = try JWK(kid: "k1", key: Self.key)
        XCTAssertEqual(jwk.kty, "RSA")
        XCTAssertEqual(jwk.alg, "RS256")
        XCTAssertEqual(jwk.use, "sig")
        XCTAssertEqual(jwk.e, "AQAB")
        let rebuilt = try jwk.publicKey()
        let signature = try Self.key.signRS256([9])
        XCTAssertTrue(rebuilt.verifyRS256(signature: signature, message: [9]))
    }
}

final class PasswordHasherTests: XCTestCase {
    // Cheap parameters keep the test fast; the format and checks are the same.
    let hasher = PasswordHasher(parameters: .init(logN: 10, r: 8, p: 1))

    func testHashAndVerify() throws {
        let stored = try hasher.hash(password: "correct horse")
        XCTAssertTrue(stored.hasPrefix("$scrypt$ln=10,r=8,p=1$"))
        XCTAssertTrue(hasher.verify(password: "correct horse", against: stored))
        XCTAssertFalse(hasher.verify(password: "correct horsE", against: stored))
        XCTAssertNotEqual(try hasher.hash(password: "correct horse"), stored, "salted")
    }

    func testStandardParametersVerify() throws {
        let standard = PasswordHasher()
        let stored = try standard.hash(password: "pw-123456")
        XCTAssertTrue(stored.hasPrefix("$scrypt$ln=13,r=8,p=10$"))
        XCTAssertTrue(standard.verify(password: "pw-123456", against: stored))
    }

    /// scrypt test vector from RFC 7914 §12 (P="password", S="NaCl", N=1024, r=8, p=16).
    func testScryptKnownAnswer() throws {
        let derived = try PasswordHasher.derive(password: "password", salt: Array("NaCl".utf8),
                                                parameters: .init(logN: 10, r: 8, p: 16), length: 64)
        XCTAssertEqual(derived.prefix(8).map { String(format: "%02x", $0) }.joined(), "fdbabe1c9d347200")
    }

    func testMalformedOrHostileStoredHashesVerifyNothing() {
        for stored in ["", "plain", "$scrypt$ln=10,r=8,p=1$$", "$scrypt$ln=30,r=8,p=1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
                       "$bcrypt$ln=10,r=8,p=1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"] {
            XCTAssertFalse(hasher.verify(password: "x", against: stored), stored)
        }
    }
}
