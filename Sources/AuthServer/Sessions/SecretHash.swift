import IssuerStorage
import SSOCore

/// The one way a secret becomes a database key: SHA-256 of its text. Codes,
/// refresh tokens, session cookies, form tokens and device secrets are never
/// stored in clear; stores only ever see these hashes.
public enum SecretHash {
    public static func of(_ secret: String) -> [UInt8] { SHA256.hash(secret) }
}
