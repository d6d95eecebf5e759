import FoundationEssentials

/// The client's side of DPoP (RFC 9449 §4.2): proofs signed with one ES256
/// key, for gatehouse-login (a phone makes its own in the Secure Enclave or
/// StrongBox; docs/API.md shows how).
public struct DPoPProofSigner {
    public let key: ES256PrivateKey
    public let jwk: ProofJWK
    /// RFC 7638 JWK SHA-256 thumbprint of the public key: what `dpop_jkt`
    /// names at /authorize (§10) and a bound token's `cnf.jkt` holds (§6.1).
    /// Computed by the verifier's own code, so the two cannot disagree.
    public let thumbprint: String

    public init(key: ES256PrivateKey) throws {
        self.key = key
        jwk = try key.publicJWK()
        thumbprint = try DPoPProof.publicKey(jwk, for: .es256).1
    }

    struct Header: Encodable {
        let typ = "dpop+jwt"
        let alg = "ES256"
        let jwk: ProofJWK
    }

    struct Claims: Encodable {
        let jti: String
        let htm: String
        let htu: String
        let iat: Int64
        let nonce: String?
        let ath: String?
    }

    /// A proof for one request. §4.2: `htu` is "the HTTP target URI ...
    /// without query and fragment parts"; `nonce` is the server's latest
    /// `DPoP-Nonce` (§8, §9); `accessToken` adds `ath` for a resource (§7).
    /// `jti` is fresh unless a test fixes it.
    public func proof(method: String, uri: String, nonce: String? = nil, accessToken: String? = nil, now: Int64,
                      jti: String = SecureRandom.token(byteCount: 16)) throws -> String {
        let htu = String(uri.prefix { $0 != "?" && $0 != "#" })
        let claims = Claims(jti: jti, htm: method, htu: htu, iat: now, nonce: nonce,
                            ath: accessToken.map(DPoPProof.accessTokenHash))
        return try JWTSigner.sign(claims, header: Header(jwk: jwk), key: key)
    }
}
