import COpenSSL
import Foundation
@testable import SSOCore
import XCTest

/// Review R3: public keys without a private key behind them (an RSA
/// exponent of 1, an Ed25519 point of small order) are refused wherever a
/// key comes from outside: DPoP proofs, passkeys, JWKs.
final class WeakPublicKeysTests: XCTestCase {
    /// Every listed y is a key OpenSSL takes and for which signatures can
    /// be forged: with S = 0, [S]B - [k]A is a small-order point, so a
    /// small-order R matches it for one k = H(R, A, M) in at most 8, and a
    /// forger grinds the message (a proof's jti) until one does. With the
    /// identity (y = 1, or p + 1) R = identity verifies every message.
    func testEverySmallOrderPointVerifiesAForgedSignatureWithoutTheCheck() throws {
        let candidates = WeakPublicKeys.smallOrderEd25519Y.flatMap { [$0, Array($0.dropLast()) + [$0[31] | 0x80]] }
        func forged(_ key: [UInt8], _ message: [UInt8]) -> Bool {
            candidates.contains { rawEd25519Verify(key: key, signature: $0 + [UInt8](repeating: 0, count: 32), message: message) }
        }
        let identity = [1] + [UInt8](repeating: 0, count: 31)
        for message in (0..<8).map({ Array("any message \($0)".utf8) }) {
            XCTAssertTrue(rawEd25519Verify(key: identity, signature: identity + [UInt8](repeating: 0, count: 32), message: message))
        }
        for y in WeakPublicKeys.smallOrderEd25519Y {
            XCTAssertTrue((0..<64).contains { forged(y, Array("jti-\($0)".utf8)) }, "\(y)")
            XCTAssertTrue(WeakPublicKeys.isSmallOrderEd25519(y))
            XCTAssertTrue(WeakPublicKeys.isSmallOrderEd25519(Array(y.dropLast()) + [y[31] | 0x80]), "whatever x's sign bit")
            XCTAssertThrowsError(try ProofVerificationKey.ed25519(x: y))
        }
        XCTAssertEqual(WeakPublicKeys.smallOrderEd25519Y.count, 7)
    }

    /// The list is the points whose y the curve's arithmetic gives
    /// (p = 2^255 - 19, d = -121665/121666): recomputed here with OpenSSL's
    /// big numbers, so a typo in a constant cannot pass.
    func testTheListIsDerivedFromTheCurve() throws {
        let context = BN_CTX_new()!
        defer { BN_CTX_free(context) }
        func number(_ decimal: String) -> OpaquePointer {
            var result: OpaquePointer? = nil
            precondition(BN_dec2bn(&result, decimal) > 0)
            return result!
        }
        let p = number("57896044618658097711785492504343953926634992332820282019728792003956564819949")
        let d = number("37095705934669439343138083508754565189542113879843219016388785533085940283555")
        func little(_ value: OpaquePointer) -> [UInt8] {
            var bytes = [UInt8](repeating: 0, count: 32)
            precondition(BN_bn2lebinpad(value, &bytes, 32) == 32)
            return bytes
        }
        func sqrt(_ value: OpaquePointer) -> OpaquePointer? { BN_mod_sqrt(nil, value, p, context) }
        func modular(_ operation: (OpaquePointer, OpaquePointer, OpaquePointer, OpaquePointer, OpaquePointer) -> Int32,
                     _ a: OpaquePointer, _ b: OpaquePointer) -> OpaquePointer {
            let result = BN_new()!
            precondition(operation(result, a, b, p, context) == 1)
            return result
        }
        let one = number("1"), zero = number("0")
        let minusOne = modular(BN_mod_sub, zero, one)
        var expected: Set<[UInt8]> = [little(zero), little(one), little(minusOne), little(p), little(modular({ r, a, b, _, _ in BN_add(r, a, b) }, p, one))]
        // x² = (1 ± sqrt(1 + d)) / d; the order-8 points have y² = -x².
        let root = try XCTUnwrap(sqrt(modular(BN_mod_add, one, d)))
        let inverseD = BN_mod_inverse(nil, d, p, context)!
        for signed in [root, modular(BN_mod_sub, zero, root)] {
            let xSquared = modular(BN_mod_mul, modular(BN_mod_add, one, signed), inverseD)
            guard let y = sqrt(modular(BN_mod_sub, zero, xSquared)) else { continue }
            expected.insert(little(y))
            expected.insert(little(modular(BN_mod_sub, zero, y)))
        }
        XCTAssertEqual(expected, WeakPublicKeys.smallOrderEd25519Y)
    }

    func testAGeneratedEd25519KeyAndEveryUsableRSAExponentPass() throws {
        for _ in 0..<20 { XCTAssertFalse(WeakPublicKeys.isSmallOrderEd25519(rawEd25519PublicKey())) }
        XCTAssertTrue(WeakPublicKeys.isUsableRSAExponent([1, 0, 1]))
        XCTAssertTrue(WeakPublicKeys.isUsableRSAExponent([3]))
        XCTAssertTrue(WeakPublicKeys.isUsableRSAExponent([0, 0, 3]))
        XCTAssertTrue(WeakPublicKeys.isUsableRSAExponent([1, 0, 0, 0, 1]))
        for weak: [UInt8] in [[], [0], [1], [0, 1], [2], [1, 0, 0], [0xFF, 0xFE]] {
            XCTAssertFalse(WeakPublicKeys.isUsableRSAExponent(weak), "\(weak)")
        }
    }

    /// RSAKey, under every path that builds one from outside bytes.
    func testAnRSAKeyWithExponentOneOrEvenIsRefused() throws {
        let (n, _) = try RSAKey.generate(bits: 2048).publicComponents()
        XCTAssertNoThrow(try RSAKey.publicKey(modulus: n, exponent: [1, 0, 1]))
        for e: [UInt8] in [[1], [0, 1], [1, 0, 0], [2]] {
            XCTAssertThrowsError(try RSAKey.publicKey(modulus: n, exponent: e), "\(e)")
        }
    }

    func rawEd25519PublicKey() -> [UInt8] {
        let context = EVP_PKEY_CTX_new_from_name(nil, "ED25519", nil)!
        defer { EVP_PKEY_CTX_free(context) }
        var created: OpaquePointer? = nil
        precondition(EVP_PKEY_keygen_init(context) == 1 && EVP_PKEY_generate(context, &created) == 1)
        defer { EVP_PKEY_free(created) }
        var key = [UInt8](repeating: 0, count: 32)
        var length = 32
        precondition(EVP_PKEY_get_raw_public_key(created, &key, &length) == 1)
        return key
    }

    /// Ed25519 verification by OpenSSL alone, without WeakPublicKeys.
    func rawEd25519Verify(key: [UInt8], signature: [UInt8], message: [UInt8]) -> Bool {
        guard let pkey = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nil, key, 32) else { return false }
        defer { EVP_PKEY_free(pkey) }
        let context = EVP_MD_CTX_new()!
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, nil, nil, pkey) == 1 else { return false }
        return EVP_DigestVerify(context, signature, signature.count, message, message.count) == 1
    }
}
