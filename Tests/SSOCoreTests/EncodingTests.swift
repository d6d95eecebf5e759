import XCTest
@testable import SSOCore

final class EncodingTests: XCTestCase {
    /// RFC 4648 §10 test vectors, in the base64url alphabet without padding.
    func testBase64URLKnownAnswers() {
        let vectors = ["": "", "f": "Zg", "fo": "Zm8", "foo": "Zm9v", "foob": "Zm9vYg", "fooba": "Zm9vYmE", "foobar": "Zm9vYmFy"]
        for (plain, encoded) in vectors {
            XCTAssertEqual(Base64URL.encode(plain), encoded)
            XCTAssertEqual(Base64URL.decode(encoded), Array(plain.utf8))
        }
        // The two characters that differ from base64 (RFC 4648 §5).
        XCTAssertEqual(Base64URL.encode([0xfb, 0xff]), "-_8")
        XCTAssertEqual(Base64URL.decode("-_8"), [0xfb, 0xff])
    }

    func testBase64URLRejectsNonCanonicalInput() {
        XCTAssertNil(Base64URL.decode("Zg=="), "padding")
        XCTAssertNil(Base64URL.decode("Zm9v+g"), "base64 alphabet")
        XCTAssertNil(Base64URL.decode("Zh"), "non-zero trailing bits (RFC 4648 §3.5)")
        XCTAssertNil(Base64URL.decode("Z"), "impossible length")
        XCTAssertNil(Base64URL.decode("Zm 9v"), "white space")
    }

    /// RFC 7636 Appendix B.
    func testPKCES256KnownAnswer() {
        let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
        XCTAssertEqual(PKCE.s256Challenge(verifier: verifier), "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
        XCTAssertTrue(PKCE.isValidVerifier(verifier))
        XCTAssertTrue(PKCE.isValidS256Challenge("E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"))
    }

    func testPKCEVerifierRules() {
        XCTAssertFalse(PKCE.isValidVerifier(String(repeating: "a", count: 42)))
        XCTAssertTrue(PKCE.isValidVerifier(String(repeating: "a", count: 43)))
        XCTAssertTrue(PKCE.isValidVerifier(String(repeating: "~", count: 128)))
        XCTAssertFalse(PKCE.isValidVerifier(String(repeating: "a", count: 129)))
        XCTAssertFalse(PKCE.isValidVerifier(String(repeating: "a", count: 42) + "+"))
        XCTAssertFalse(PKCE.isValidVerifier(String(repeating: "a", count: 42) + "\n"))
        XCTAssertTrue(PKCE.isValidVerifier(PKCE.makeVerifier()))
    }

    func testSHA256KnownAnswer() {
        // FIPS 180-2 Appendix B.1.
        XCTAssertEqual(SHA256.hash("abc").map { String(format: "%02x", $0) }.joined(),
                       "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    func testHMACSHA256KnownAnswer() {
        // RFC 4231 test case 2.
        let mac = HMACSHA256.authenticate(Array("what do ya want for nothing?".utf8), key: Array("Jefe".utf8))
        XCTAssertEqual(mac.map { String(format: "%02x", $0) }.joined(),
                       "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }

    func testConstantTimeEquals() {
        XCTAssertTrue(ConstantTime.equals([1, 2, 3], [1, 2, 3]))
        XCTAssertFalse(ConstantTime.equals([1, 2, 3], [1, 2, 4]))
        XCTAssertFalse(ConstantTime.equals([1, 2], [1, 2, 3]))
        XCTAssertTrue(ConstantTime.equals([], []))
    }

    func testSecureRandomTokensDiffer() {
        let a = SecureRandom.token(), b = SecureRandom.token()
        XCTAssertNotEqual(a, b)
        XCTAssertEqual(Base64URL.decode(a)?.count, 32)
    }
}
