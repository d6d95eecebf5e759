/// One public signing key as a JWK (RFC 7517 §4): RSA (RFC 7518 §6.3.1),
/// EC P-256 (§6.2.1) or OKP Ed25519 (RFC 8037 §2).
public struct JWK: Codable, Equatable, Sendable {
    public var kty: String
    public var use: String?
    public var alg: String?
    public var kid: String?
    public var crv: String?
    public var x: String?
    public var y: String?
    public var n: String?
    public var e: String?

    public init(kid: String, key: RSAKey) throws {
        let components = try key.publicComponents()
        kty = "RSA"
        use = "sig"
        alg = "RS256"
        self.kid = kid
        n = Base64URL.encode(components.modulus)
        e = Base64URL.encode(components.exponent)
    }

    public init(kty: String, use: String? = "sig", alg: String?, kid: String?, crv: String? = nil, x: String? = nil, y: String? = nil,
                n: String? = nil, e: String? = nil) {
        self.kty = kty
        self.use = use
        self.alg = alg
        self.kid = kid
        self.crv = crv
        self.x = x
        self.y = y
        self.n = n
        self.e = e
    }

    /// The key as a verifier of the one algorithm it may sign with: RSA
    /// keys RS256 (`alg` absent or RS256), P-256 keys ES256, Ed25519 keys
    /// EdDSA; nil for anything else (another curve, an `alg` that does not
    /// fit the key, a malformed member), so a JWKS entry never verifies a
    /// signature of an algorithm it was not meant for.
    public func verificationKey() -> (any JWSVerificationKey)? {
        switch (kty, crv) {
        case ("RSA", nil) where alg == nil || alg == JWSAlgorithm.rs256.rawValue:
            return try? publicKey()
        case ("EC", "P-256") where alg == nil || alg == JWSAlgorithm.es256.rawValue:
            guard let x = x.flatMap(Base64URL.decode), let y = y.flatMap(Base64URL.decode) else { return nil }
            return try? ProofVerificationKey.p256(x: x, y: y)
        case ("OKP", "Ed25519") where alg == nil || alg == JWSAlgorithm.edDSA.rawValue:
            guard let x = x.flatMap(Base64URL.decode) else { return nil }
            return try? ProofVerificationKey.ed25519(x: x)
        default:
            return nil
        }
    }

    /// The RFC 7638 thumbprint: SHA-256 over the required members in
    /// lexicographic order with no white space. Used as the `kid`, so a kid
    /// names exactly one key.
    public static func thumbprint(of key: RSAKey) throws -> String {
        let components = try key.publicComponents()
        let canonical = "{\"e\":\"\(Base64URL.encode(components.exponent))\",\"kty\":\"RSA\",\"n\":\"\(Base64URL.encode(components.modulus))\"}"
        return Base64URL.encode(SHA256.hash(canonical))
    }

    public func publicKey() throws -> RSAKey {
        guard kty == "RSA", let modulus = n.flatMap(Base64URL.decode), let exponent = e.flatMap(Base64URL.decode) else {
            throw JWTError(.malformed, detail: "JWK is not a usable RSA key")
        }
        return try RSAKey.publicKey(modulus: modulus, exponent: exponent)
    }
}

/// A JWK Set (RFC 7517 §5).
public struct JWKSet: Codable, Equatable, Sendable {
    public var keys: [JWK]
    public init(keys: [JWK]) { self.keys = keys }
}
