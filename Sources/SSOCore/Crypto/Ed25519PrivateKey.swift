import COpenSSL

/// An Ed25519 private key that signs JWS `EdDSA` (RFC 8037 §3.1): one of
/// the issuer's signing keys (`ssoctl keys rotate --alg EdDSA`).
public final class Ed25519PrivateKey {
    let pkey: OpaquePointer

    private init(taking pkey: OpaquePointer) { self.pkey = pkey }
    deinit { EVP_PKEY_free(pkey) }

    public static func generate() throws -> Ed25519PrivateKey {
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "ED25519", nil) else { throw OpenSSLError("EVP_PKEY_CTX_new_from_name(ED25519)") }
        defer { EVP_PKEY_CTX_free(context) }
        var created: OpaquePointer?
        guard EVP_PKEY_keygen_init(context) == 1, EVP_PKEY_generate(context, &created) == 1, let key = created else {
            throw OpenSSLError("Ed25519 key generation")
        }
        return Ed25519PrivateKey(taking: key)
    }

    public static func privateKey(pem: [UInt8]) throws -> Ed25519PrivateKey {
        let bio = try MemoryBIO(copying: pem)
        guard let key = PEM_read_bio_PrivateKey(bio.handle, nil, nil, nil) else { throw OpenSSLError("PEM_read_bio_PrivateKey") }
        guard EVP_PKEY_get_base_id(key) == EVP_PKEY_ED25519 else {
            EVP_PKEY_free(key)
            throw OpenSSLError("not an Ed25519 key")
        }
        return Ed25519PrivateKey(taking: key)
    }

    /// RFC 8032 §5.1.5: the private key from its 32-byte seed (the test
    /// vectors of RFC 8037 Appendix A give one).
    public static func privateKey(seed: [UInt8]) throws -> Ed25519PrivateKey {
        guard seed.count == 32,
              let key = seed.withUnsafeBufferPointer({ EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nil, $0.baseAddress, 32) }) else {
            throw OpenSSLError("not an Ed25519 seed")
        }
        return Ed25519PrivateKey(taking: key)
    }

    public func privateKeyPEM() throws -> [UInt8] {
        let bio = try MemoryBIO()
        guard PEM_write_bio_PrivateKey(bio.handle, pkey, nil, nil, 0, nil, nil) == 1 else { throw OpenSSLError("PEM_write_bio_PrivateKey") }
        return bio.readAll()
    }

    public func publicKeyPEM() throws -> [UInt8] { try writePublicKeyPEM(pkey) }

    /// The 32-byte public key (RFC 8037 §2 `x`).
    public func publicKeyBytes() throws -> [UInt8] { try rawPublicKey(pkey) }

    /// RFC 8037 §3.1: "The EdDSA signature over the JWS Signing Input", 64 bytes.
    public func sign(_ message: [UInt8]) throws -> [UInt8] {
        let context = try DigestContext()
        guard EVP_DigestSignInit(context.handle, nil, nil, nil, pkey) == 1 else { throw OpenSSLError("EVP_DigestSignInit(Ed25519)") }
        var length = 64
        var signature = [UInt8](repeating: 0, count: 64)
        guard message.withUnsafeBufferPointer({ EVP_DigestSign(context.handle, &signature, &length, $0.baseAddress, message.count) }) == 1,
              length == 64 else { throw OpenSSLError("EVP_DigestSign(Ed25519)") }
        return signature
    }
}

/// SubjectPublicKeyInfo PEM of any key.
func writePublicKeyPEM(_ pkey: OpaquePointer) throws -> [UInt8] {
    let bio = try MemoryBIO()
    guard PEM_write_bio_PUBKEY(bio.handle, pkey) == 1 else { throw OpenSSLError("PEM_write_bio_PUBKEY") }
    return bio.readAll()
}

/// An Ed25519 key's 32 public bytes.
func rawPublicKey(_ pkey: OpaquePointer) throws -> [UInt8] {
    var length = 32
    var bytes = [UInt8](repeating: 0, count: 32)
    guard EVP_PKEY_get_raw_public_key(pkey, &bytes, &length) == 1, length == 32 else { throw OpenSSLError("EVP_PKEY_get_raw_public_key") }
    return bytes
}
