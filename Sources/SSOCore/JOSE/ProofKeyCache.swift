/// The keys one process has built from DPoP proofs, by the `jwk` members
/// exactly as sent (with the algorithm): a phone signs every request with
/// one key, and building it (OpenSSL's EVP_PKEY_fromdata, the point check)
/// costs about as much as verifying the signature. Only keys that were
/// built without error are kept; the signature is still verified on every
/// request. Bounded: when full it starts over, so made-up keys sent by the
/// thousand cannot grow it.
public final class ProofKeyCache {
    public static let capacity = 256
    private var keys: [[UInt8]: (key: any JWSVerificationKey, thumbprint: String)] = [:]

    public init() {}

    func key(_ jwk: ProofJWK, for algorithm: JWSAlgorithm) throws -> (any JWSVerificationKey, String) {
        // Private members are refused before this is asked (§4.3 check 7);
        // the public ones, in a fixed order, name the key, by their bytes
        // (a `String` key would let "\u{212A}" stand for "K").
        let name = Array([algorithm.rawValue, jwk.kty, jwk.crv ?? "", jwk.x ?? "", jwk.y ?? "", jwk.n ?? "", jwk.e ?? ""]
            .joined(separator: " ").utf8)
        if let found = keys[name] { return found }
        let built = try DPoPProof.publicKey(jwk, for: algorithm)
        if keys.count >= Self.capacity { keys.removeAll(keepingCapacity: true) }
        keys[name] = built
        return built
    }
}
