/// The COSE algorithms a credential public key may name here (IANA COSE
/// Algorithms registry), the same three DPoP takes (DPoPProof.algorithms).
public enum COSEAlgorithm: Int, CaseIterable, Sendable {
    /// ECDSA over P-256 with SHA-256 (RFC 9053 §2.1); what every platform
    /// authenticator and most security keys make.
    case es256 = -7
    /// EdDSA (RFC 9053 §2.2), here Ed25519 only.
    case edDSA = -8
    /// RSASSA-PKCS1-v1_5 with SHA-256 (RFC 8812 §2), 2048-bit moduli or
    /// longer; Windows Hello's older TPM keys.
    case rs256 = -257
}

/// A credential public key (WebAuthn §6.5.1.1: "encoded in COSE_Key format,
/// as defined in Section 7 of [RFC9052], using the CTAP2 canonical CBOR
/// encoding form"), built into an OpenSSL key by the same builders DPoP's
/// proof keys use.
public struct COSEPublicKey {
    public let algorithm: COSEAlgorithm
    let key: any JWSVerificationKey

    /// RFC 9052 §7.1 common parameters.
    enum Label {
        static let kty = 1, alg = 3
        /// RFC 9053 §7.1.1 (EC2) and §7.2 (OKP): crv, x, y; d is private.
        static let crv = -1, x = -2, y = -3, d = -4
        /// RFC 8230 §4: n, e; -3 (d) to -12 are the private key.
        static let n = -1, e = -2
        static let rsaPrivate = -12 ... -3
    }

    /// RFC 9053 §7 and RFC 8230 §4 key types; RFC 9053 §7.1 curves.
    enum KeyType { static let okp = 1, ec2 = 2, rsa = 3 }
    enum Curve { static let p256 = 1, ed25519 = 6 }

    /// The key in `bytes`, which must be one COSE_Key and nothing more.
    public static func parse(_ bytes: [UInt8]) throws -> COSEPublicKey {
        let value: CBORValue
        do {
            value = try CBOR.decode(bytes)
        } catch let error as CBORError {
            throw WebAuthnError(.malformedCBOR, "credential public key: \(error)")
        }
        return try parse(value)
    }

    public static func parse(_ value: CBORValue) throws -> COSEPublicKey {
        guard let map = value.mapValue else { throw WebAuthnError(.badPublicKey, "credential public key is not a CBOR map") }
        // WebAuthn's keys are labelled by integers only.
        var labels: [Int: CBORValue] = [:]
        for (key, member) in map {
            guard case .int(let label) = key else { throw WebAuthnError(.badPublicKey, "COSE_Key label \(key) is not an integer") }
            labels[label] = member
        }
        // §6.5.1.1: the key "MUST contain the "alg" parameter".
        guard let kty = labels[Label.kty]?.intValue else { throw WebAuthnError(.badPublicKey, "COSE_Key without an integer kty") }
        guard let alg = labels[Label.alg]?.intValue else { throw WebAuthnError(.badPublicKey, "COSE_Key without an integer alg") }
        guard let algorithm = COSEAlgorithm(rawValue: alg) else { throw WebAuthnError(.unsupportedAlgorithm, "COSE alg \(alg)") }
        let expectedType = switch algorithm {
        case .es256: KeyType.ec2
        case .edDSA: KeyType.okp
        case .rs256: KeyType.rsa
        }
        guard kty == expectedType else { throw WebAuthnError(.badPublicKey, "COSE kty \(kty) does not fit alg \(alg)") }
        // A public key only: the private members are refused, never ignored.
        let privateLabels = kty == KeyType.rsa ? Array(Label.rsaPrivate) : [Label.d]
        if let label = privateLabels.first(where: { labels[$0] != nil }) {
            throw WebAuthnError(.privateKeyIncluded, "COSE_Key holds private member \(label)")
        }
        func bytes(_ label: Int, _ name: String) throws -> [UInt8] {
            guard let value = labels[label]?.bytesValue, !value.isEmpty else {
                throw WebAuthnError(.badPublicKey, "COSE_Key \(name) missing or not a byte string")
            }
            return value
        }
        do {
            switch algorithm {
            case .es256:
                guard labels[Label.crv]?.intValue == Curve.p256 else { throw WebAuthnError(.badPublicKey, "ES256 key not on P-256") }
                let x = try bytes(Label.x, "x"), y = try bytes(Label.y, "y")
                guard x.count == 32, y.count == 32 else { throw WebAuthnError(.badPublicKey, "P-256 coordinates of \(x.count) and \(y.count) bytes") }
                return COSEPublicKey(algorithm: algorithm, key: try ProofVerificationKey.p256(x: x, y: y))
            case .edDSA:
                guard labels[Label.crv]?.intValue == Curve.ed25519 else { throw WebAuthnError(.unsupportedAlgorithm, "EdDSA key not on Ed25519") }
                let x = try bytes(Label.x, "x")
                guard x.count == 32 else { throw WebAuthnError(.badPublicKey, "Ed25519 key of \(x.count) bytes") }
                return COSEPublicKey(algorithm: algorithm, key: try ProofVerificationKey.ed25519(x: x))
            case .rs256:
                let n = try bytes(Label.n, "n"), e = try bytes(Label.e, "e")
                // RSAKey refuses moduli under 2048 bits and exponents below 3 or even (WeakPublicKeys).
                return COSEPublicKey(algorithm: algorithm, key: try RSAKey.publicKey(modulus: n, exponent: e))
            }
        } catch let error as WebAuthnError {
            throw error
        } catch {
            throw WebAuthnError(.badPublicKey, "not a usable \(algorithm) key: \(error)")
        }
    }

    /// Verifies an assertion or self-attestation signature (WebAuthn
    /// §6.5.5): ES256 as ASN.1 DER, EdDSA as the 64-byte Ed25519 signature,
    /// RS256 as the PKCS #1 v1.5 signature. Any failure is `false`.
    public func verify(signature: [UInt8], message: [UInt8]) -> Bool {
        switch algorithm {
        case .es256:
            guard let key = key as? ProofVerificationKey else { return false }
            return key.verify(derSignature: signature, message: message)
        case .edDSA, .rs256:
            return key.verify(signature: signature, message: message)
        }
    }
}
