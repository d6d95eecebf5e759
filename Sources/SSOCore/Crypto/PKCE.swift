/// PKCE (RFC 7636) with the S256 method only.
public enum PKCE {
    /// RFC 7636 §4.2: code_challenge = BASE64URL-ENCODE(SHA256(ASCII(code_verifier))).
    public static func s256Challenge(verifier: String) -> String {
        Base64URL.encode(SHA256.hash(Array(verifier.utf8)))
    }

    /// RFC 7636 §4.1: code-verifier = 43*128unreserved, where
    /// unreserved = ALPHA / DIGIT / "-" / "." / "_" / "~".
    public static func isValidVerifier(_ verifier: String) -> Bool {
        (43...128).contains(verifier.utf8.count) && verifier.utf8.allSatisfy(isUnreserved)
    }

    /// A challenge must look like S256 output: 43 base64url characters.
    public static func isValidS256Challenge(_ challenge: String) -> Bool {
        challenge.utf8.count == 43 && Base64URL.decode(challenge)?.count == 32
    }

    /// A fresh verifier with 256 bits of entropy (RFC 7636 §7.1 recommends 32 octets).
    public static func makeVerifier() -> String { SecureRandom.token(byteCount: 32) }

    static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"): true
        default: false
        }
    }
}
