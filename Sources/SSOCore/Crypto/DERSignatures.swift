import COpenSSL

/// ES256 signatures as WebAuthn carries them: "For COSEAlgorithmIdentifier
/// -7 (ES256) ... the sig value MUST be encoded as an ASN.1 DER
/// Ecdsa-Sig-Value, as defined in [RFC3279] section 2.2.3" (WebAuthn §6.5.5),
/// not JWS's R || S. Verified by ProofVerificationKey's own verify (which
/// takes R || S) after a strict conversion: only DER is accepted, not every
/// BER spelling OpenSSL's parser would take, so one signature has one
/// encoding.
extension ProofVerificationKey {
    public func verify(derSignature: [UInt8], message: [UInt8]) -> Bool {
        guard algorithm == .es256, let raw = Self.rawSignature(der: derSignature) else { return false }
        return verify(signature: raw, message: message)
    }

    /// DER SEQUENCE { INTEGER r, INTEGER s } to 32-byte R || S; nil unless
    /// the input is exactly the DER encoding of two non-negative integers
    /// below 2^256.
    static func rawSignature(der: [UInt8]) -> [UInt8]? {
        defer { _ = OpenSSLError.drainErrorQueue() }
        // 2 + 2 × (2 + 33): two 256-bit integers with a leading zero each.
        guard !der.isEmpty, der.count <= 72 else { return nil }
        var cursor: UnsafePointer<UInt8>? = nil
        var consumed = 0
        let parsed = der.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            cursor = buffer.baseAddress
            let signature = d2i_ECDSA_SIG(nil, &cursor, der.count)
            if let cursor, let base = buffer.baseAddress { consumed = cursor - base }
            return signature
        }
        guard let signature = parsed else { return nil }
        defer { ECDSA_SIG_free(signature) }
        guard consumed == der.count, let r = ECDSA_SIG_get0_r(signature), let s = ECDSA_SIG_get0_s(signature),
              gatehouse_bn_num_bytes(r) <= 32, gatehouse_bn_num_bytes(s) <= 32 else { return nil }
        var raw = [UInt8](repeating: 0, count: 64)
        guard raw.withUnsafeMutableBufferPointer({ BN_bn2binpad(r, $0.baseAddress, 32) == 32 && BN_bn2binpad(s, $0.baseAddress! + 32, 32) == 32 })
        else { return nil }
        // Re-encoded, it must give back the input: refuses negative
        // integers, superfluous leading zeros and long-form lengths.
        guard derSignature(raw: raw) == der else { return nil }
        return raw
    }
}
