/// The JWS algorithms Gatehouse verifies (RFC 7518 §3.1, RFC 8037 §3.1):
/// asymmetric signatures only. `none` and the HMAC family (HS256 ...) have
/// no case, so no verifier can be configured to accept them: RFC 8725 §3.1,
/// "Libraries MUST enable the caller to specify a supported set of
/// algorithms and MUST NOT use any other algorithms when performing
/// cryptographic operations", and §2.1 (the `none` and HS256-with-a-public-key
/// attacks).
public enum JWSAlgorithm: String, CaseIterable, Sendable {
    /// ECDSA over P-256 with SHA-256, R || S (RFC 7518 §3.4).
    case es256 = "ES256"
    /// Ed25519 (RFC 8037 §3.1).
    case edDSA = "EdDSA"
    /// RSASSA-PKCS1-v1_5 with SHA-256 (RFC 7518 §3.3).
    case rs256 = "RS256"
    /// RSASSA-PSS with SHA-256, MGF1 with SHA-256 (RFC 7518 §3.5): clients'
    /// assertions and request objects (FAPI 2.0 allows PS256 and ES256).
    case ps256 = "PS256"
}
