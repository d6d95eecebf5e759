import Foundation
@testable import SSOCore
import XCTest

/// DPoP proofs (RFC 9449 §4.3): each check refuses what it must, and a
/// proof signed by another implementation (the openssl command) verifies.
final class DPoPProofTests: XCTestCase {
    let now: Int64 = 1_800_000_000
    let request = DPoPRequest(method: "POST", uri: "https://issuer.example/token")

    func proof(header: [String: Any]? = nil, claims: [String: Any]? = nil, key: ES256PrivateKey? = nil,
               mutate: (inout [UInt8]) -> Void = { _ in }) throws -> String {
        let key = try key ?? ES256PrivateKey.generate()
        let jwk = try key.publicJWK()
        let header = header ?? ["typ": "dpop+jwt", "alg": "ES256", "jwk": ["kty": jwk.kty, "crv": jwk.crv!, "x": jwk.x!, "y": jwk.y!]]
        let claims = claims ?? ["jti": UUID().uuidString, "htm": "POST", "htu": "https://issuer.example/token", "iat": now]
        let input = Base64URL.encode(try JSONSerialization.data(withJSONObject: header)) + "."
            + Base64URL.encode(try JSONSerialization.data(withJSONObject: claims))
        var signature = try key.sign(Array(input.utf8))
        mutate(&signature)
        return input + "." + Base64URL.encode(signature)
    }

    func assertRefused(_ proof: String, _ reason: DPoPError.Reason, for request: DPoPRequest? = nil, file: StaticString = #filePath,
                       line: UInt = #line) {
        XCTAssertThrowsError(try DPoPProof.verify(proof, for: request ?? self.request, now: now), file: file, line: line) { error in
            XCTAssertEqual((error as? DPoPError)?.reason, reason, "\(error)", file: file, line: line)
        }
    }

    func testAGoodProofVerifiesAndNamesItsKeyByThumbprint() throws {
        let key = try ES256PrivateKey.generate()
        let verified = try DPoPProof.verify(try proof(key: key), for: request, now: now)
        let jwk = try key.publicJWK()
        let canonical = #"{"crv":"P-256","kty":"EC","x":"\#(jwk.x!)","y":"\#(jwk.y!)"}"#
        XCTAssertEqual(verified.jkt, Base64URL.encode(SHA256.hash(canonical)), "RFC 7638: the required members, sorted, no spaces")
        XCTAssertNil(verified.nonce)
        // RFC 9449 §4.3: htu compared without query and fragment, after normalization.
        for uri in ["https://ISSUER.example:443/token?x=1", "https://issuer.example/token#f"] {
            XCTAssertNoThrow(try DPoPProof.verify(try proof(key: key), for: DPoPRequest(method: "POST", uri: uri), now: now), uri)
        }
    }

    func testEveryCheckRefuses() throws {
        let key = try ES256PrivateKey.generate()
        let jwk = try key.publicJWK()
        let goodJWK: [String: Any] = ["kty": "EC", "crv": "P-256", "x": jwk.x!, "y": jwk.y!]
        let claims: [String: Any] = ["jti": "j1", "htm": "POST", "htu": "https://issuer.example/token", "iat": now]
        func with(_ changes: [String: Any?], in base: [String: Any]) -> [String: Any] {
            var result = base
            for (name, value) in changes { result[name] = value }
            return result
        }
        let header: [String: Any] = ["typ": "dpop+jwt", "alg": "ES256", "jwk": goodJWK]
        assertRefused("not.a.jwt.at.all", .malformed)
        assertRefused("", .malformed)
        assertRefused(try proof(header: with(["typ": "JWT"], in: header), key: key), .wrongType)
        assertRefused(try proof(header: with(["alg": "none"], in: header), key: key), .unsupportedAlgorithm)
        assertRefused(try proof(header: with(["alg": "HS256"], in: header), key: key), .unsupportedAlgorithm)
        assertRefused(try proof(header: with(["jwk": with(["d": "c2VjcmV0"], in: goodJWK)], in: header), key: key), .privateKeyIncluded)
        assertRefused(try proof(header: with(["jwk": with(["crv": "P-384"], in: goodJWK)], in: header), key: key), .badKey)
        assertRefused(try proof(header: with(["jwk": with(["x": Base64URL.encode([UInt8](repeating: 7, count: 32))], in: goodJWK)],
                                             in: header), key: key), .badKey, for: nil)
        assertRefused(try proof(header: header, claims: claims, key: key) { $0[5] ^= 1 }, .badSignature)
        assertRefused(try proof(header: header, claims: claims, key: key, mutate: { $0 = Array($0.prefix(63)) }), .badSignature)
        assertRefused(try proof(header: header, claims: with(["htm": "GET"], in: claims), key: key), .wrongMethod)
        assertRefused(try proof(header: header, claims: with(["htu": "https://other.example/token"], in: claims), key: key), .wrongURI)
        assertRefused(try proof(header: header, claims: with(["htu": "https://issuer.example/token/"], in: claims), key: key), .wrongURI)
        // Bytes, not Unicode: "\u{212A}" (KELVIN SIGN) lower-cases to "k" and
        // equals "K" to Swift's `==`; no host, method or hash is spelled so.
        assertRefused(try proof(header: header, claims: with(["htu": "https://issuer.example/to\u{212A}en"], in: claims), key: key), .wrongURI,
                      for: DPoPRequest(method: "POST", uri: "https://issuer.example/toKen"))
        assertRefused(try proof(header: header, claims: with(["htu": "https://\u{212A}.example/token"], in: claims), key: key), .wrongURI,
                      for: DPoPRequest(method: "POST", uri: "https://k.example/token"))
        assertRefused(try proof(header: header, claims: with(["iat": now - 121], in: claims), key: key), .stale)
        assertRefused(try proof(header: header, claims: with(["iat": now + 61], in: claims), key: key), .stale)
        assertRefused(try proof(header: header, claims: with(["jti": nil], in: claims), key: key), .malformed)
        assertRefused(try proof(header: header, claims: with(["iat": "now"], in: claims), key: key), .malformed)
        // Found by the resource-server work: a huge iat trapped the conversion to Int64.
        assertRefused(try proof(header: header, claims: with(["iat": 1e300], in: claims), key: key), .malformed)
        assertRefused(try proof(header: header, claims: with(["iat": -1e300], in: claims), key: key), .malformed)
        let resource = DPoPRequest(method: "POST", uri: "https://issuer.example/token", accessToken: "the-token")
        assertRefused(try proof(header: header, claims: claims, key: key), .missingAccessTokenHash, for: resource)
        assertRefused(try proof(header: header, claims: with(["ath": DPoPProof.accessTokenHash("another")], in: claims), key: key),
                      .wrongAccessTokenHash, for: resource)
        // A token whose hash has a "K" in it, and that hash with the KELVIN SIGN.
        let token = try XCTUnwrap((0..<100).map { "token-\($0)" }.first { DPoPProof.accessTokenHash($0).contains("K") })
        let kelvin = DPoPProof.accessTokenHash(token).replacingOccurrences(of: "K", with: "\u{212A}")
        assertRefused(try proof(header: header, claims: with(["ath": kelvin], in: claims), key: key), .wrongAccessTokenHash,
                      for: DPoPRequest(method: "POST", uri: "https://issuer.example/token", accessToken: token))
        XCTAssertNoThrow(try DPoPProof.verify(try proof(header: header, claims: with(["ath": DPoPProof.accessTokenHash("the-token")],
                                                                                       in: claims), key: key), for: resource, now: now))
    }

    /// An RS256 proof key costs what its size and exponent make it cost, and
    /// anyone can send one to /token: 4096 bits and a 32-bit exponent at most.
    /// (Any odd number serves as a public modulus; the signature is never
    /// reached when the key is refused.)
    func testLargeRSAProofKeysAreRefusedBeforeAnySignatureCheck() throws {
        func rsaProof(modulusBytes: Int, exponent: [UInt8]) throws -> String {
            let n = [0xC0] + [UInt8](repeating: 0x5A, count: modulusBytes - 2) + [0x01]
            let header: [String: Any] = ["typ": "dpop+jwt", "alg": "RS256",
                                         "jwk": ["kty": "RSA", "n": Base64URL.encode(n), "e": Base64URL.encode(exponent)]]
            let claims: [String: Any] = ["jti": "rsa", "htm": "POST", "htu": "https://issuer.example/token", "iat": now]
            return Base64URL.encode(try JSONSerialization.data(withJSONObject: header)) + "."
                + Base64URL.encode(try JSONSerialization.data(withJSONObject: claims)) + "." + Base64URL.encode([UInt8](repeating: 1, count: modulusBytes))
        }
        assertRefused(try rsaProof(modulusBytes: 512, exponent: [1, 0, 1]), .badSignature)
        assertRefused(try rsaProof(modulusBytes: 513, exponent: [1, 0, 1]), .badKey)
        assertRefused(try rsaProof(modulusBytes: 1024, exponent: [1, 0, 1]), .badKey)
        assertRefused(try rsaProof(modulusBytes: 256, exponent: [0x7F, 0xFF, 0xFF, 0xFF]), .badSignature)
        assertRefused(try rsaProof(modulusBytes: 256, exponent: [1, 0, 0, 0, 1]), .badKey)
    }

    /// Review R5: an authority with two ports lost its last `:443` and
    /// passed for the other; RFC 3986 §3.2 has one port at most.
    func testHTUMustHaveAWellFormedAuthority() throws {
        let key = try ES256PrivateKey.generate()
        let jwk = try key.publicJWK()
        let header: [String: Any] = ["typ": "dpop+jwt", "alg": "ES256", "jwk": ["kty": "EC", "crv": "P-256", "x": jwk.x!, "y": jwk.y!]]
        func withHTU(_ htu: String) throws -> String {
            try proof(header: header, claims: ["jti": UUID().uuidString, "htm": "POST", "htu": htu, "iat": now], key: key)
        }
        let onPort = DPoPRequest(method: "POST", uri: "https://issuer.example:8443/token")
        for htu in ["https://issuer.example:8443:443/token", "https://issuer.example:443:8443/token", "https://issuer.example:8443:/token",
                    "https://user@issuer.example:8443/token", "https://issuer.example:84a3/token", "https://:8443/token",
                    "https://issuer.example:108443/token", "https://[::1/token", "https://iss uer.example:8443/token"] {
            assertRefused(try withHTU(htu), .wrongURI, for: onPort)
        }
        XCTAssertNoThrow(try DPoPProof.verify(try withHTU("https://ISSUER.example:8443/token"), for: onPort, now: now))
        for htu in ["https://issuer.example:/token", "https://issuer.example:443/token", "https://issuer.example:0443/token"] {
            XCTAssertNoThrow(try DPoPProof.verify(try withHTU(htu), for: request, now: now), htu)
        }
        XCTAssertEqual(DPoPProof.normalizedURI("https://[::1]:8443/token"), "https://[::1]:8443/token")
        XCTAssertEqual(DPoPProof.normalizedURI("https://[::1]:443"), "https://[::1]/")
        XCTAssertNil(DPoPProof.normalizedURI("https://[::1]x:443/"))
        XCTAssertNil(DPoPProof.normalizedURI("https://issuer.example:65536/"))
    }

    /// Review R3: keys that sign nothing, yet verify: an RSA exponent of 1
    /// (the signature is the padded hash itself) or an even one, and the
    /// Ed25519 identity point (an all-zero signature verifies anything).
    func testProofKeysWithoutAPrivateKeyAreRefused() throws {
        let claims: [String: Any] = ["jti": "weak", "htm": "POST", "htu": "https://issuer.example/token", "iat": now]
        func unsigned(_ header: [String: Any], signature: [UInt8]) throws -> String {
            Base64URL.encode(try JSONSerialization.data(withJSONObject: header)) + "."
                + Base64URL.encode(try JSONSerialization.data(withJSONObject: claims)) + "." + Base64URL.encode(signature)
        }
        let identity = [1] + [UInt8](repeating: 0, count: 31)
        assertRefused(try unsigned(["typ": "dpop+jwt", "alg": "EdDSA", "jwk": ["kty": "OKP", "crv": "Ed25519", "x": Base64URL.encode(identity)]],
                                   signature: [UInt8](repeating: 0, count: 64)), .badKey)
        let (n, _) = try RSAKey.generate(bits: 2048).publicComponents()
        for e: [UInt8] in [[1], [1, 0, 0]] {
            assertRefused(try unsigned(["typ": "dpop+jwt", "alg": "RS256", "jwk": ["kty": "RSA", "n": Base64URL.encode(n), "e": Base64URL.encode(e)]],
                                       signature: [UInt8](repeating: 1, count: 256)), .badKey)
        }
    }

    /// A proof signed by the openssl command (DER signature converted to
    /// R || S here, as every JOSE library does) verifies: the verifier
    /// agrees with an implementation it did not write.
    func testAProofSignedByTheOpenSSLCommandVerifies() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("dpop-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let keyPath = directory.appendingPathComponent("key.pem").path
        try run("/usr/bin/openssl", ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", keyPath])
        let key = try ES256PrivateKey.privateKey(pem: Array(try Data(contentsOf: URL(fileURLWithPath: keyPath))))
        let jwk = try key.publicJWK()
        let header: [String: Any] = ["typ": "dpop+jwt", "alg": "ES256", "jwk": ["kty": "EC", "crv": "P-256", "x": jwk.x!, "y": jwk.y!]]
        let claims: [String: Any] = ["jti": "openssl", "htm": "POST", "htu": "https://issuer.example/token", "iat": now]
        let input = Base64URL.encode(try JSONSerialization.data(withJSONObject: header)) + "."
            + Base64URL.encode(try JSONSerialization.data(withJSONObject: claims))
        let inputPath = directory.appendingPathComponent("input").path
        try Data(input.utf8).write(to: URL(fileURLWithPath: inputPath))
        let der = try run("/usr/bin/openssl", ["dgst", "-sha256", "-sign", keyPath, inputPath])
        let raw = try XCTUnwrap(Self.rawSignature(der: Array(der)))
        XCTAssertEqual(try DPoPProof.verify(input + "." + Base64URL.encode(raw), for: request, now: now).jti, "openssl")
    }

    func testNoncesAreGoodForTheirPeriodAndTheNextEverywhereTheKeyIs() {
        let key = SecureRandom.bytes(32)
        let issuer = DPoPNonces(key: key, purpose: "issuer"), sameKey = DPoPNonces(key: key, purpose: "issuer")
        let nonce = issuer.current(now: now)
        XCTAssertTrue(sameKey.isValid(nonce, now: now), "another process, the same key")
        XCTAssertTrue(sameKey.isValid(nonce, now: now + DPoPNonces.period))
        XCTAssertFalse(sameKey.isValid(nonce, now: now + 2 * DPoPNonces.period + 1), "two periods on: stale")
        XCTAssertFalse(DPoPNonces(key: key, purpose: "api").isValid(nonce, now: now), "another purpose")
        XCTAssertFalse(DPoPNonces(key: SecureRandom.bytes(32), purpose: "issuer").isValid(nonce, now: now), "another key")
        XCTAssertFalse(issuer.isValid(nonce + "x", now: now))
    }

    @discardableResult
    func run(_ tool: String, _ arguments: [String]) throws -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0)
        return data
    }

    /// DER SEQUENCE { INTEGER r, INTEGER s } to 32-byte R || S.
    static func rawSignature(der: [UInt8]) -> [UInt8]? {
        guard der.count > 8, der[0] == 0x30 else { return nil }
        var index = 2
        var parts: [[UInt8]] = []
        for _ in 0..<2 {
            guard der[index] == 0x02 else { return nil }
            let length = Int(der[index + 1])
            var value = Array(der[(index + 2)..<(index + 2 + length)])
            while value.count > 32 && value.first == 0 { value.removeFirst() }
            parts.append([UInt8](repeating: 0, count: 32 - value.count) + value)
            index += 2 + length
        }
        return parts[0] + parts[1]
    }
}
