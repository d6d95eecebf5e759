import COpenSSL

/// A public key taken from a proof's `jwk`, for one algorithm.
public final class ProofVerificationKey {
    let pkey: OpaquePointer
    public let algorithm: JWSAlgorithm

    private init(taking pkey: OpaquePointer, algorithm: JWSAlgorithm) {
        self.pkey = pkey
        self.algorithm = algorithm
    }
    deinit { EVP_PKEY_free(pkey) }

    /// A P-256 point from its affine coordinates (RFC 7518 §6.2.1: 32
    /// bytes each). OpenSSL refuses a point that is not on the curve.
    public static func p256(x: [UInt8], y: [UInt8]) throws -> ProofVerificationKey {
        guard x.count == 32, y.count == 32 else { throw OpenSSLError("P-256 coordinates must be 32 bytes each") }
        let point = [0x04] + x + y
        let key: OpaquePointer
        do {
            key = try point.withUnsafeBytes { bytes in
                try makePublicKey(type: "EC") { builder in
                    OSSL_PARAM_BLD_push_utf8_string(builder, staticCString("group"), staticCString("prime256v1"), 0) == 1
                        && OSSL_PARAM_BLD_push_octet_string(builder, staticCString("pub"), bytes.baseAddress, bytes.count) == 1
                }
            }
        } catch {
            _ = OpenSSLError.drainErrorQueue()
            throw OpenSSLError("not a P-256 point")
        }
        return ProofVerificationKey(taking: key, algorithm: .es256)
    }

    /// An Ed25519 public key (RFC 8037 §2: `x`, 32 bytes), never one of
    /// small order (WeakPublicKeys: it would verify an all-zero signature).
    public static func ed25519(x: [UInt8]) throws -> ProofVerificationKey {
        guard !WeakPublicKeys.isSmallOrderEd25519(x) else { throw OpenSSLError("an Ed25519 point of small order") }
        guard x.count == 32,
              let key = x.withUnsafeBufferPointer({ EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nil, $0.baseAddress, 32) }) else {
            _ = OpenSSLError.drainErrorQueue()
            throw OpenSSLError("not an Ed25519 public key")
        }
        return ProofVerificationKey(taking: key, algorithm: .edDSA)
    }

    /// Verifies a JWS signature (RFC 7518 §3.4: ES256 is R || S, 32 bytes
    /// each; RFC 8037 §3.1: EdDSA over the message itself). Any failure is
    /// `false`, with OpenSSL's error queue drained.
    public func verify(signature: [UInt8], message: [UInt8]) -> Bool {
        defer { _ = OpenSSLError.drainErrorQueue() }
        switch algorithm {
        case .es256:
            guard signature.count == 64, let der = Self.derSignature(raw: signature) else { return false }
            return digestVerify(der, message, digest: EVP_sha256())
        case .edDSA:
            return signature.count == 64 && digestVerify(signature, message, digest: nil)
        case .rs256, .ps256:
            return false
        }
    }

    private func digestVerify(_ signature: [UInt8], _ message: [UInt8], digest: OpaquePointer?) -> Bool {
        guard let context = try? DigestContext(), EVP_DigestVerifyInit(context.handle, nil, digest, nil, pkey) == 1 else { return false }
        return signature.withUnsafeBufferPointer { sig in
            message.withUnsafeBufferPointer { msg in
                EVP_DigestVerify(context.handle, sig.baseAddress, signature.count, msg.baseAddress, message.count)
            }
        } == 1
    }

    /// JWS R || S to the DER ECDSA-Sig-Value OpenSSL verifies.
    static func derSignature(raw: [UInt8]) -> [UInt8]? {
        guard let signature = ECDSA_SIG_new() else { return nil }
        defer { ECDSA_SIG_free(signature) }
        guard let r = raw[0..<32].withUnsafeBufferPointer({ BN_bin2bn($0.baseAddress, 32, nil) }) else { return nil }
        guard let s = raw[32..<64].withUnsafeBufferPointer({ BN_bin2bn($0.baseAddress, 32, nil) }) else { BN_free(r); return nil }
        guard ECDSA_SIG_set0(signature, r, s) == 1 else { BN_free(r); BN_free(s); return nil }
        var output: UnsafeMutablePointer<UInt8>?
        let length = i2d_ECDSA_SIG(signature, &output)
        guard length > 0, let output else { return nil }
        defer { gatehouse_openssl_free(output) }
        return Array(UnsafeBufferPointer(start: output, count: Int(length)))
    }
}

/// A P-256 private key that signs ES256: gatehouse-login's DPoP key (a
/// phone keeps its own in the Secure Enclave or StrongBox), and the tests'.
public final class ES256PrivateKey {
    let pkey: OpaquePointer

    private init(taking pkey: OpaquePointer) { self.pkey = pkey }
    deinit { EVP_PKEY_free(pkey) }

    public static func generate() throws -> ES256PrivateKey {
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else { throw OpenSSLError("EVP_PKEY_CTX_new_from_name(EC)") }
        defer { EVP_PKEY_CTX_free(context) }
        var created: OpaquePointer?
        guard EVP_PKEY_keygen_init(context) == 1, EVP_PKEY_CTX_set_group_name(context, "P-256") == 1,
              EVP_PKEY_generate(context, &created) == 1, let key = created else { throw OpenSSLError("P-256 key generation") }
        return ES256PrivateKey(taking: key)
    }

    public static func privateKey(pem: [UInt8]) throws -> ES256PrivateKey {
        let bio = try MemoryBIO(copying: pem)
        guard let key = PEM_read_bio_PrivateKey(bio.handle, nil, nil, nil) else { throw OpenSSLError("PEM_read_bio_PrivateKey") }
        guard EVP_PKEY_get_base_id(key) == EVP_PKEY_EC, EVP_PKEY_get_bits(key) == 256 else {
            EVP_PKEY_free(key)
            throw OpenSSLError("not a P-256 key")
        }
        return ES256PrivateKey(taking: key)
    }

    public func privateKeyPEM() throws -> [UInt8] {
        let bio = try MemoryBIO()
        guard PEM_write_bio_PrivateKey(bio.handle, pkey, nil, nil, 0, nil, nil) == 1 else { throw OpenSSLError("PEM_write_bio_PrivateKey") }
        return bio.readAll()
    }

    public func publicKeyPEM() throws -> [UInt8] { try writePublicKeyPEM(pkey) }

    /// The public JWK (RFC 7518 §6.2.1), coordinates padded to 32 bytes.
    public func publicJWK() throws -> ProofJWK {
        ProofJWK(kty: "EC", crv: "P-256", x: Base64URL.encode(try IssuerPublicKey.coordinate(pkey, "qx")),
                 y: Base64URL.encode(try IssuerPublicKey.coordinate(pkey, "qy")))
    }

    /// ES256 (RFC 7518 §3.4): the DER signature OpenSSL makes, as R || S.
    public func sign(_ message: [UInt8]) throws -> [UInt8] {
        let context = try DigestContext()
        guard EVP_DigestSignInit(context.handle, nil, EVP_sha256(), nil, pkey) == 1 else { throw OpenSSLError("EVP_DigestSignInit") }
        var length = 0
        guard message.withUnsafeBufferPointer({ EVP_DigestSign(context.handle, nil, &length, $0.baseAddress, message.count) }) == 1
        else { throw OpenSSLError("EVP_DigestSign(size)") }
        var der = [UInt8](repeating: 0, count: length)
        guard message.withUnsafeBufferPointer({ EVP_DigestSign(context.handle, &der, &length, $0.baseAddress, message.count) }) == 1
        else { throw OpenSSLError("EVP_DigestSign") }
        var cursor: UnsafePointer<UInt8>? = nil
        let parsed = der.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            cursor = buffer.baseAddress
            return d2i_ECDSA_SIG(nil, &cursor, length)
        }
        guard let signature = parsed else { throw OpenSSLError("d2i_ECDSA_SIG") }
        defer { ECDSA_SIG_free(signature) }
        func padded(_ bn: OpaquePointer?) -> [UInt8] {
            guard let bn else { return [] }
            var bytes = [UInt8](repeating: 0, count: 32)
            _ = BN_bn2binpad(bn, &bytes, 32)
            return bytes
        }
        return padded(ECDSA_SIG_get0_r(signature)) + padded(ECDSA_SIG_get0_s(signature))
    }
}
