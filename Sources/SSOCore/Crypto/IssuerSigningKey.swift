import COpenSSL

/// One of the issuer's private signing keys, of an algorithm it signs
/// tokens with: RS256 (RSA 2048), ES256 (P-256) or EdDSA (Ed25519). Each
/// is kept as PKCS #8 PEM and published as a JWK whose `kid` is its RFC
/// 7638 thumbprint.
public enum IssuerSigningKey {
    case rs256(RSAKey)
    case es256(ES256PrivateKey)
    case edDSA(Ed25519PrivateKey)

    /// The algorithms the issuer signs with (`ssoctl keys rotate --alg`).
    public static let algorithms: [JWSAlgorithm] = [.rs256, .es256, .edDSA]

    public static func generate(_ algorithm: JWSAlgorithm) throws -> IssuerSigningKey {
        switch algorithm {
        case .rs256: .rs256(try RSAKey.generate(bits: 2048))
        case .es256: .es256(try ES256PrivateKey.generate())
        case .edDSA: .edDSA(try Ed25519PrivateKey.generate())
        case .ps256: throw OpenSSLError("the issuer does not sign with PS256")
        }
    }

    public static func load(pem: [UInt8], algorithm: JWSAlgorithm) throws -> IssuerSigningKey {
        switch algorithm {
        case .rs256: .rs256(try RSAKey.privateKey(pem: pem))
        case .es256: .es256(try ES256PrivateKey.privateKey(pem: pem))
        case .edDSA: .edDSA(try Ed25519PrivateKey.privateKey(pem: pem))
        case .ps256: throw OpenSSLError("the issuer does not sign with PS256")
        }
    }

    /// The RSA key of an RS256 signing key (nil for the others).
    public var rsaKey: RSAKey? {
        if case .rs256(let key) = self { return key }
        return nil
    }

    public var algorithm: JWSAlgorithm {
        switch self {
        case .rs256: .rs256
        case .es256: .es256
        case .edDSA: .edDSA
        }
    }

    public func privateKeyPEM() throws -> [UInt8] {
        switch self {
        case .rs256(let key): try key.privateKeyPEM()
        case .es256(let key): try key.privateKeyPEM()
        case .edDSA(let key): try key.privateKeyPEM()
        }
    }

    public func publicKeyPEM() throws -> [UInt8] {
        switch self {
        case .rs256(let key): try key.publicKeyPEM()
        case .es256(let key): try key.publicKeyPEM()
        case .edDSA(let key): try key.publicKeyPEM()
        }
    }

    /// The JWS signature over `message` (RFC 7518 §3.3, §3.4; RFC 8037 §3.1).
    public func sign(_ message: [UInt8]) throws -> [UInt8] {
        switch self {
        case .rs256(let key): try key.signRS256(message)
        case .es256(let key): try key.sign(message)
        case .edDSA(let key): try key.sign(message)
        }
    }

    /// The RFC 7638 thumbprint of the public key: the `kid`.
    public func thumbprint() throws -> String {
        try IssuerPublicKey.thumbprint(of: IssuerPublicKey.jwk(pem: try publicKeyPEM(), algorithm: algorithm, kid: ""))
    }
}

/// The public half of an issuer key, from the PEM stored beside it: as a
/// JWK for the JWKS, and as a verification key for tokens the issuer sees
/// again (ID token hints, its own access tokens).
public enum IssuerPublicKey {
    /// RFC 7517 §4 with RFC 7518 §6.2.1 (EC), §6.3.1 (RSA), RFC 8037 §2 (OKP).
    public static func jwk(pem: [UInt8], algorithm: JWSAlgorithm, kid: String) throws -> JWK {
        switch algorithm {
        case .rs256:
            return try JWK(kid: kid, key: RSAKey.publicKey(pem: pem))
        case .es256:
            let pkey = try read(pem, type: EVP_PKEY_EC)
            defer { EVP_PKEY_free(pkey) }
            return JWK(kty: "EC", alg: algorithm.rawValue, kid: kid, crv: "P-256", x: Base64URL.encode(try coordinate(pkey, "qx")),
                       y: Base64URL.encode(try coordinate(pkey, "qy")))
        case .edDSA:
            let pkey = try read(pem, type: EVP_PKEY_ED25519)
            defer { EVP_PKEY_free(pkey) }
            return JWK(kty: "OKP", alg: algorithm.rawValue, kid: kid, crv: "Ed25519", x: Base64URL.encode(try rawPublicKey(pkey)))
        case .ps256:
            throw OpenSSLError("the issuer does not sign with PS256")
        }
    }

    public static func verificationKey(pem: [UInt8], algorithm: JWSAlgorithm) throws -> any JWSVerificationKey {
        if algorithm == .rs256 { return try RSAKey.publicKey(pem: pem) }
        guard let key = try jwk(pem: pem, algorithm: algorithm, kid: "").verificationKey() else {
            throw OpenSSLError("not a \(algorithm.rawValue) public key")
        }
        return key
    }

    /// RFC 7638 §3.2: the required members only, in lexicographic order,
    /// no white space (RFC 8037 §2 for OKP).
    public static func thumbprint(of jwk: JWK) throws -> String {
        let canonical: String
        switch jwk.kty {
        case "RSA": canonical = "{\"e\":\"\(jwk.e ?? "")\",\"kty\":\"RSA\",\"n\":\"\(jwk.n ?? "")\"}"
        case "EC": canonical = "{\"crv\":\"\(jwk.crv ?? "")\",\"kty\":\"EC\",\"x\":\"\(jwk.x ?? "")\",\"y\":\"\(jwk.y ?? "")\"}"
        case "OKP": canonical = "{\"crv\":\"\(jwk.crv ?? "")\",\"kty\":\"OKP\",\"x\":\"\(jwk.x ?? "")\"}"
        default: throw JWTError(.malformed, detail: "no thumbprint for kty \(jwk.kty)")
        }
        return Base64URL.encode(SHA256.hash(canonical))
    }

    static func read(_ pem: [UInt8], type: Int32) throws -> OpaquePointer {
        let bio = try MemoryBIO(copying: pem)
        guard let pkey = PEM_read_bio_PUBKEY(bio.handle, nil, nil, nil) else { throw OpenSSLError("PEM_read_bio_PUBKEY") }
        guard EVP_PKEY_get_base_id(pkey) == type else {
            EVP_PKEY_free(pkey)
            throw OpenSSLError("a public key of another type")
        }
        return pkey
    }

    /// A P-256 coordinate, left-padded to 32 bytes (RFC 7518 §6.2.1.2).
    static func coordinate(_ pkey: OpaquePointer, _ name: String) throws -> [UInt8] {
        var raw: OpaquePointer?
        guard EVP_PKEY_get_bn_param(pkey, name, &raw) == 1, let bn = raw else { throw OpenSSLError("EVP_PKEY_get_bn_param(\(name))") }
        let bytes = BigNumber(taking: bn).bigEndianBytes()
        return [UInt8](repeating: 0, count: 32 - bytes.count) + bytes
    }
}
