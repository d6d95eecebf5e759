/// Public keys that a signature check would accept although no private key
/// stands behind them: the one check DPoP proof keys, passkeys and every
/// RSA key pass through (`RSAKey`, `ProofVerificationKey`), so no path that
/// takes a key from the outside can skip it.
public enum WeakPublicKeys {
    /// RFC 8017 §3.1: "the RSA public exponent e is an integer between 3
    /// and n - 1 satisfying GCD(e, \lambda(n)) = 1", so odd: with e = 1 the
    /// "signature" is the padded message itself, which anyone can write.
    /// `exponent`: big-endian, as a JWK or COSE key carries it.
    public static func isUsableRSAExponent(_ exponent: [UInt8]) -> Bool {
        let significant = exponent.drop { $0 == 0 }
        guard let last = significant.last, last & 1 == 1 else { return false }
        return significant.count > 1 || last >= 3
    }

    /// RFC 8032 §5.1.7 checks the equation [8][S]B = [8]R + [8][k]A, which a
    /// public key A of small order (its [8]A is the identity) satisfies for
    /// R = identity, S = 0 and any message: an all-zero signature verifies
    /// everything. RFC 8032 leaves refusing such keys to the verifier; we
    /// do, as libsodium does. A point is named by its y coordinate (little
    /// endian, the top bit being x's sign), so the small-order points are
    /// the y values below, whatever that bit, counting the two encodings
    /// of y that are not reduced modulo p = 2^255 - 19 (p and p + 1).
    public static func isSmallOrderEd25519(_ x: [UInt8]) -> Bool {
        guard x.count == 32 else { return false }
        let y = Array(x[0..<31]) + [x[31] & 0x7F]
        return smallOrderEd25519Y.contains(y)
    }

    /// The identity (y = 1), the point of order 2 (y = p - 1), the two of
    /// order 4 (y = 0), the four of order 8 (y = ±sqrt(-x²) where
    /// x² = (1 ± sqrt(1 + d)) / d, the doubling of a point to one of order
    /// 4 being y(2P) = 0), then y = p and y = p + 1 (0 and 1 unreduced).
    /// Tests/SSOCoreTests/WeakPublicKeysTests.swift derives the list again.
    static let smallOrderEd25519Y: Set<[UInt8]> = Set([
        "0000000000000000000000000000000000000000000000000000000000000000",
        "0100000000000000000000000000000000000000000000000000000000000000",
        "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",
        "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a",
        "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
        "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
        "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
    ].map(hexBytes))

    static func hexBytes(_ hex: String) -> [UInt8] {
        let digits = Array(hex.utf8).map { UInt8(($0 >= 0x61 ? $0 - 0x61 + 10 : $0 - 0x30)) }
        return stride(from: 0, to: digits.count, by: 2).map { digits[$0] << 4 | digits[$0 + 1] }
    }
}
