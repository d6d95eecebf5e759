import COpenSSL

/// HMAC-SHA-1 through OpenSSL's one-shot HMAC, for TOTP (RFC 6238 §1.2:
/// "TOTP implementations MAY use HMAC-SHA-256 or HMAC-SHA-512 functions";
/// every authenticator app implements the SHA-1 default). HMAC-SHA-1 stays
/// sound as a PRF (RFC 6151 §3 on HMAC-MD5 applies the same way); only
/// SHA-1's collision resistance is broken, which HMAC does not rely on.
///
/// Named `HMACSHA1` rather than `HMAC.sha1` because an `HMAC` type in this
/// module would shadow OpenSSL's `HMAC()` function that HMACSHA256 calls.
public enum HMACSHA1 {
    public static let outputByteCount = 20

    public static func authenticate(_ message: [UInt8], key: [UInt8]) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: outputByteCount)
        var length: UInt32 = 0
        let result = key.withUnsafeBytes { keyBytes in
            message.withUnsafeBytes { messageBytes in
                HMAC(EVP_sha1(), keyBytes.baseAddress, Int32(key.count),
                     messageBytes.bindMemory(to: UInt8.self).baseAddress, messageBytes.count,
                     &output, &length)
            }
        }
        precondition(result != nil && length == UInt32(outputByteCount), "HMAC-SHA-1 cannot fail on valid input")
        return output
    }
}
