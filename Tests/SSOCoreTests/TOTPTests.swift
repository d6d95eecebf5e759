import Foundation
import XCTest
@testable import SSOCore

/// Known answers for HMAC-SHA-1, HOTP, TOTP, base32 and AES-256-GCM, each
/// from the RFC or specification that defines it.
final class TOTPTests: XCTestCase {
    static let rfcSeed = Array("12345678901234567890".utf8)

    private func hex(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2)
            bytes.append(UInt8(text[index..<next], radix: 16)!)
            index = next
        }
        return bytes
    }

    private func hexString(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    // MARK: HMAC-SHA-1 (RFC 2202 §3)

    func testHMACSHA1KnownAnswersFromRFC2202() {
        let cases: [(key: [UInt8], data: [UInt8], digest: String)] = [
            ([UInt8](repeating: 0x0b, count: 20), Array("Hi There".utf8), "b617318655057264e28bc0b6fb378c8ef146be00"),
            (Array("Jefe".utf8), Array("what do ya want for nothing?".utf8), "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79"),
            ([UInt8](repeating: 0xaa, count: 20), [UInt8](repeating: 0xdd, count: 50), "125d7342b9ac11cd91a39af48aa17b4f63f175d3"),
            ([UInt8](repeating: 0xaa, count: 80), Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
             "aa4ae5e15272d00e95705637ce8a3b55ed402112"),
        ]
        for (key, data, digest) in cases {
            XCTAssertEqual(hexString(HMACSHA1.authenticate(data, key: key)), digest)
        }
    }

    /// Interop: the same MAC as the openssl command line.
    func testHMACSHA1MatchesOpenSSLCommandLine() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = ["dgst", "-sha1", "-mac", "HMAC", "-macopt", "hexkey:" + hexString(Self.rfcSeed), "-r"]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        input.fileHandleForWriting.write(Data("gatehouse".utf8))
        try input.fileHandleForWriting.close()
        process.waitUntilExit()
        let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        XCTAssertEqual(printed.split(separator: " ").first.map(String.init),
                       hexString(HMACSHA1.authenticate(Array("gatehouse".utf8), key: Self.rfcSeed)))
    }

    // MARK: HOTP (RFC 4226 Appendix D)

    func testHOTPKnownAnswersFromRFC4226AppendixD() {
        let expected = ["755224", "287082", "359152", "969429", "338314", "254676", "287922", "162583", "399871", "520489"]
        for (counter, code) in expected.enumerated() {
            XCTAssertEqual(TOTP.hotp(secret: Self.rfcSeed, counter: UInt64(counter)), code, "counter \(counter)")
        }
    }

    // MARK: TOTP (RFC 6238 Appendix B, SHA-1 rows)

    func testTOTPKnownAnswersFromRFC6238AppendixB() {
        let rows: [(time: Int64, step: Int64, code: String)] = [
            (59, 0x1, "94287082"),
            (1_111_111_109, 0x23523EC, "07081804"),
            (1_111_111_111, 0x23523ED, "14050471"),
            (1_234_567_890, 0x273EF07, "89005924"),
            (2_000_000_000, 0x3F940AA, "69279037"),
            (20_000_000_000, 0x27BC86AA, "65353130"),
        ]
        for (time, step, code) in rows {
            XCTAssertEqual(TOTP.step(at: time), step, "T for \(time)")
            XCTAssertEqual(TOTP.code(secret: Self.rfcSeed, step: step, digits: 8), code, "8 digits at \(time)")
            // Six digits: the same truncated number mod 10^6, i.e. the last six digits.
            XCTAssertEqual(TOTP.code(secret: Self.rfcSeed, step: step), String(code.suffix(6)), "6 digits at \(time)")
        }
    }

    func testStepBoundariesAndLeadingZeros() {
        XCTAssertEqual(TOTP.step(at: 0), 0)
        XCTAssertEqual(TOTP.step(at: 29), 0)
        XCTAssertEqual(TOTP.step(at: 30), 1)
        XCTAssertEqual(TOTP.step(at: -1), -1, "rounded down, not toward zero")
        // 1111111109 gives 07081804: the leading zero is kept.
        XCTAssertEqual(TOTP.code(secret: Self.rfcSeed, step: 0x23523EC, digits: 8).count, 8)
        XCTAssertEqual(TOTP.code(secret: Self.rfcSeed, step: 0x23523EC), "081804")
    }

    // MARK: base32 (RFC 4648 §10, unpadded)

    func testBase32KnownAnswersFromRFC4648() {
        let vectors = [("", ""), ("f", "MY"), ("fo", "MZXQ"), ("foo", "MZXW6"), ("foob", "MZXW6YQ"), ("fooba", "MZXW6YTB"),
                       ("foobar", "MZXW6YTBOI")]
        for (plain, encoded) in vectors {
            XCTAssertEqual(Base32.encode(Array(plain.utf8)), encoded)
            XCTAssertEqual(Base32.decode(encoded), Array(plain.utf8))
        }
        XCTAssertEqual(Base32.encode(Self.rfcSeed), "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ")
    }

    func testBase32RoundTripsAndStrictDecoding() {
        for count in 0..<41 {
            let bytes = SecureRandom.bytes(count)
            let encoded = Base32.encode(bytes)
            XCTAssertFalse(encoded.contains("="))
            XCTAssertEqual(Base32.decode(encoded), bytes)
        }
        for bad in ["MZXW6===", "mzxw6", "M", "MZX", "MZXW6YTBO", "MZ1W", "MZ XW"] {
            XCTAssertNil(Base32.decode(bad), bad)
        }
        XCTAssertNil(Base32.decode("MZ"), "stray low bits (RFC 4648 §3.5)")
    }

    // MARK: AES-256-GCM

    /// The GCM specification's Test Case 14 (AES-256, zero key, zero IV,
    /// one zero block) opens to the zero block.
    func testAESGCMOpensTheGCMSpecTestCase14() throws {
        let sealed = [UInt8](repeating: 0, count: 12) + hex("cea7403d4d606b6e074ec5d3baf39d18") + hex("d0d1c8a799996bf0265b98b5d48ab919")
        XCTAssertEqual(try AESGCM.open(sealed, key: [UInt8](repeating: 0, count: 32), authenticating: []), [UInt8](repeating: 0, count: 16))
    }

    func testAESGCMRoundTripAndEveryTamperFails() throws {
        let key = SecureRandom.bytes(32)
        let secret = SecureRandom.bytes(20)
        let aad = Array("context-1".utf8)
        let sealed = try AESGCM.seal(secret, key: key, authenticating: aad)
        XCTAssertEqual(sealed.count, 12 + 20 + 16)
        XCTAssertNotEqual(try AESGCM.seal(secret, key: key, authenticating: aad), sealed, "a fresh nonce each time")
        XCTAssertEqual(try AESGCM.open(sealed, key: key, authenticating: aad), secret)
        XCTAssertThrowsError(try AESGCM.open(sealed, key: SecureRandom.bytes(32), authenticating: aad))
        XCTAssertThrowsError(try AESGCM.open(sealed, key: key, authenticating: Array("context-2".utf8)))
        XCTAssertThrowsError(try AESGCM.open(Array(sealed.prefix(27)), key: key, authenticating: aad))
        for index in sealed.indices {
            var flipped = sealed
            flipped[index] ^= 0x01
            XCTAssertThrowsError(try AESGCM.open(flipped, key: key, authenticating: aad), "bit flip at \(index)")
        }
    }
}
