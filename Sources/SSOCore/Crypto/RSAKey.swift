import COpenSSL

/// An RSA key held as one OpenSSL `EVP_PKEY`, freed with this object. It may
/// hold a private key (it signs) or only a public one (it verifies).
public final class RSAKey {
    private let pkey: OpaquePointer
    public let hasPrivateKey: Bool

    private init(taking pkey: OpaquePointer, hasPrivateKey: Bool) {
        self.pkey = pkey
        self.hasPrivateKey = hasPrivateKey
    }

    deinit { EVP_PKEY_free(pkey) }

    /// A new RSA private key (2048 bits unless asked otherwise).
    public static func generate(bits: Int = 2048) throws -> RSAKey {
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "RSA", nil) else { throw OpenSSLError("EVP_PKEY_CTX_new_from_name") }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_keygen_init(context) == 1,
              EVP_PKEY_CTX_set_rsa_keygen_bits(context, Int32(bits)) == 1 else { throw OpenSSLError("RSA keygen init") }
        var generated: OpaquePointer?
        guard EVP_PKEY_generate(context, &generated) == 1, let key = generated else { throw OpenSSLError("EVP_PKEY_generate") }
        return RSAKey(taking: key, hasPrivateKey: true)
    }

    /// Loads a PEM private key (PKCS#8 or traditional RSA). Refuses non-RSA
    /// keys and RSA keys under 2048 bits.
    public static func privateKey(pem: [UInt8]) throws -> RSAKey {
        let bio = try MemoryBIO(copying: pem)
        guard let key = PEM_read_bio_PrivateKey(bio.handle, nil, nil, nil) else { throw OpenSSLError("PEM_read_bio_PrivateKey") }
        return try checked(RSAKey(taking: key, hasPrivateKey: true))
    }

    /// Loads a PEM SubjectPublicKeyInfo public key.
    public static func publicKey(pem: [UInt8]) throws -> RSAKey {
        let bio = try MemoryBIO(copying: pem)
        guard let key = PEM_read_bio_PUBKEY(bio.handle, nil, nil, nil) else { throw OpenSSLError("PEM_read_bio_PUBKEY") }
        return try checked(RSAKey(taking: key, hasPrivateKey: false))
    }

    /// Builds a public key from a JWK's big-endian modulus and exponent.
    public static func publicKey(modulus: [UInt8], exponent: [UInt8]) throws -> RSAKey {
        guard !modulus.isEmpty, !exponent.isEmpty, modulus.count <= 1024, exponent.count <= 8 else {
            throw OpenSSLError("RSA public key from JWK: bad sizes")
        }
        let n = try BigNumber(bigEndian: modulus)
        let e = try BigNumber(bigEndian: exponent)
        // n and e must outlive the builder's copy of them, not just their
        // last Swift use.
        let key = try withExtendedLifetime((n, e)) {
            try makePublicKey(type: "RSA") { builder in
                OSSL_PARAM_BLD_push_BN(builder, staticCString("n"), n.handle) == 1
                    && OSSL_PARAM_BLD_push_BN(builder, staticCString("e"), e.handle) == 1
            }
        }
        return try checked(RSAKey(taking: key, hasPrivateKey: false))
    }

    private static func checked(_ key: RSAKey) throws -> RSAKey {
        guard EVP_PKEY_get_base_id(key.pkey) == EVP_PKEY_RSA else { throw OpenSSLError("key is not RSA") }
        guard key.bits >= 2048 else { throw OpenSSLError("RSA key shorter than 2048 bits") }
        guard WeakPublicKeys.isUsableRSAExponent(try key.publicComponents().exponent) else {
            throw OpenSSLError("RSA public exponent below 3 or even")
        }
        return key
    }

    public var bits: Int { Int(EVP_PKEY_get_bits(pkey)) }

    public func privateKeyPEM() throws -> [UInt8] {
        precondition(hasPrivateKey, "privateKeyPEM() on a public key")
        let bio = try MemoryBIO()
        guard PEM_write_bio_PrivateKey(bio.handle, pkey, nil, nil, 0, nil, nil) == 1 else { throw OpenSSLError("PEM_write_bio_PrivateKey") }
        return bio.readAll()
    }

    public func publicKeyPEM() throws -> [UInt8] {
        let bio = try MemoryBIO()
        guard PEM_write_bio_PUBKEY(bio.handle, pkey) == 1 else { throw OpenSSLError("PEM_write_bio_PUBKEY") }
        return bio.readAll()
    }

    /// The public modulus and exponent, big-endian, as a JWK carries them.
    public func publicComponents() throws -> (modulus: [UInt8], exponent: [UInt8]) {
        (try bigNumberParameter("n"), try bigNumberParameter("e"))
    }

    private func bigNumberParameter(_ name: String) throws -> [UInt8] {
        var raw: OpaquePointer?
        guard EVP_PKEY_get_bn_param(pkey, name, &raw) == 1, let bn = raw else { throw OpenSSLError("EVP_PKEY_get_bn_param(\(name))") }
        return BigNumber(taking: bn).bigEndianBytes()
    }

    /// RSASSA-PKCS1-v1_5 with SHA-256: JWS "RS256" (RFC 7518 §3.3).
    public func signRS256(_ message: [UInt8]) throws -> [UInt8] {
        precondition(hasPrivateKey, "signRS256 on a public key")
        let context = try DigestContext()
        guard EVP_DigestSignInit(context.handle, nil, EVP_sha256(), nil, pkey) == 1 else { throw OpenSSLError("EVP_DigestSignInit") }
        var length = 0
        guard message.withUnsafeBufferPointer({ EVP_DigestSign(context.handle, nil, &length, $0.baseAddress, message.count) }) == 1
        else { throw OpenSSLError("EVP_DigestSign(size)") }
        var signature = [UInt8](repeating: 0, count: length)
        guard message.withUnsafeBufferPointer({ EVP_DigestSign(context.handle, &signature, &length, $0.baseAddress, message.count) }) == 1
        else { throw OpenSSLError("EVP_DigestSign") }
        return Array(signature.prefix(length))
    }

    /// Verifies an RS256 signature. Any failure, including a malformed
    /// signature, is simply `false`; the error queue is drained either way.
    public func verifyRS256(signature: [UInt8], message: [UInt8]) -> Bool {
        guard let context = try? DigestContext() else { return false }
        defer { _ = OpenSSLError.drainErrorQueue() }
        guard EVP_DigestVerifyInit(context.handle, nil, EVP_sha256(), nil, pkey) == 1 else { return false }
        let result = signature.withUnsafeBufferPointer { sig in
            message.withUnsafeBufferPointer { msg in
                EVP_DigestVerify(context.handle, sig.baseAddress, signature.count, msg.baseAddress, message.count)
            }
        }
        return result == 1
    }

    /// RFC 7518 §3.5: "RSASSA-PSS using SHA-256 and MGF1 with SHA-256", and
    /// "The size of the salt value is the same size as the hash function
    /// output" (32 bytes); any other salt length is refused.
    public func verifyPS256(signature: [UInt8], message: [UInt8]) -> Bool {
        guard let context = try? DigestContext() else { return false }
        defer { _ = OpenSSLError.drainErrorQueue() }
        var keyContext: OpaquePointer?
        guard EVP_DigestVerifyInit(context.handle, &keyContext, EVP_sha256(), nil, pkey) == 1, let keyContext,
              EVP_PKEY_CTX_set_rsa_padding(keyContext, RSA_PKCS1_PSS_PADDING) == 1,
              EVP_PKEY_CTX_set_rsa_pss_saltlen(keyContext, 32) == 1,
              EVP_PKEY_CTX_set_rsa_mgf1_md(keyContext, EVP_sha256()) == 1 else { return false }
        return signature.withUnsafeBufferPointer { sig in
            message.withUnsafeBufferPointer { msg in
                EVP_DigestVerify(context.handle, sig.baseAddress, signature.count, msg.baseAddress, message.count)
            }
        } == 1
    }
}

/// An RSA public key that verifies PS256 (RFC 8725 §3.1: one key, one
/// algorithm; the same RSA key material as an RS256 key is another key here).
public final class RSAPSSVerificationKey: JWSVerificationKey {
    let key: RSAKey
    public init(_ key: RSAKey) { self.key = key }
    public var algorithm: JWSAlgorithm { .ps256 }
    public func verify(signature: [UInt8], message: [UInt8]) -> Bool { key.verifyPS256(signature: signature, message: message) }
}

/// Owns one `EVP_MD_CTX`.
final class DigestContext {
    let handle: OpaquePointer
    init() throws {
        guard let context = EVP_MD_CTX_new() else { throw OpenSSLError("EVP_MD_CTX_new") }
        handle = context
    }
    deinit { EVP_MD_CTX_free(handle) }
}

/// Owns one `BIGNUM`.
final class BigNumber {
    let handle: OpaquePointer
    init(taking handle: OpaquePointer) { self.handle = handle }
    init(bigEndian bytes: [UInt8]) throws {
        guard let bn = bytes.withUnsafeBufferPointer({ BN_bin2bn($0.baseAddress, Int32(bytes.count), nil) }) else {
            throw OpenSSLError("BN_bin2bn")
        }
        handle = bn
    }
    deinit { BN_free(handle) }
    func bigEndianBytes() -> [UInt8] {
        var output = [UInt8](repeating: 0, count: Int(gatehouse_bn_num_bytes(handle)))
        let written = BN_bn2bin(handle, &output)
        return Array(output.prefix(Int(written)))
    }
}
