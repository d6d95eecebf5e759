import IssuerStorage
import SSOCore

/// The `ds_hash` and `di_hash` ID token claims, which bind an ID token to a
/// device secret (current draft) or a device id (seed profile).
///
/// Rule (one for both claims), computed as `at_hash` is in OIDC Core
/// §3.1.3.6 with the hash of RS256, the only algorithm the issuer signs with:
///
///     ds_hash = BASE64URL( left-most 128 bits of SHA-256( ASCII(device_secret) ) )
///     di_hash = BASE64URL( left-most 128 bits of SHA-256( ASCII(device_id) ) )
///
/// i.e. the first 16 octets of the SHA-256 digest, base64url without padding
/// (22 characters). Example: `printf %s "$DEVICE_SECRET" | openssl dgst
/// -sha256 -binary | head -c 16 | openssl base64 -A | tr '+/' '-_' | tr -d '='`.
///
/// Native SSO §3.4.1 (draft 07): "ds_hash ... The ds_hash value is a hash
/// of the device_secret value" computed like at_hash, so that app #2 can
/// prove it holds the secret app #1 got with this ID token.
public enum NativeSSOHash {
    public static func of(_ value: String) -> String { fromDigest(SHA256.hash(value)) }

    /// The same value from a stored SecretHash (the full SHA-256 of the
    /// secret): a refreshed ID token can keep `ds_hash` without the issuer
    /// ever holding the secret in clear.
    public static func fromDigest(_ digest: [UInt8]) -> String { Base64URL.encode(digest.prefix(16)) }

    /// Constant time: the claim is public, but the value is a secret.
    public static func matches(_ value: String, claim: String) -> Bool {
        ConstantTime.equals(Array(of(value).utf8), Array(claim.utf8))
    }
}
