/// One public RSA signing key as a JWK (RFC 7517 §4, RFC 7518 §6.3.1).
public struct JWK: Codable, Equatable, Sendable {
    public var kty: String
    public var use: String?
    public var alg: String?
    public var kid: String?
    public var n: String
    public var e: String

    public init(kid: String, key: RSAKey) throws {
        let components = try key.publicComponents()
        kty = "RSA"
        use = "sig"
        alg = "RS256"
        self.kid = kid
        n = Base64URL.encode(components.modulus)
        e = Base64URL.encode(components.exponent)
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
        guard kty == "RSA", let modulus = Base64URL.decode(n), let exponent = Base64URL.decode(e) else {
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
