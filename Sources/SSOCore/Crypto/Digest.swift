import COpenSSL

/// SHA-256 through OpenSSL's one-shot EVP_Digest.
public enum SHA256 {
    public static func hash<Bytes: Collection>(_ data: Bytes) -> [UInt8] where Bytes.Element == UInt8 {
        var output = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let ok = Array(data).withUnsafeBytes { input in
            EVP_Digest(input.baseAddress, input.count, &output, &length, EVP_sha256(), nil)
        }
        precondition(ok == 1 && length == 32, "EVP_Digest(SHA-256) cannot fail on valid input")
        return output
    }

    public static func hash(_ text: String) -> [UInt8] { hash(Array(text.utf8)) }
}

/// HMAC-SHA-256 through OpenSSL's one-shot HMAC (used for keyed lookups).
public enum HMACSHA256 {
    public static func authenticate(_ message: [UInt8], key: [UInt8]) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let result = key.withUnsafeBytes { keyBytes in
            message.withUnsafeBytes { messageBytes in
                HMAC(EVP_sha256(), keyBytes.baseAddress, Int32(key.count),
                     messageBytes.bindMemory(to: UInt8.self).baseAddress, messageBytes.count,
                     &output, &length)
            }
        }
        precondition(result != nil && length == 32, "HMAC-SHA-256 cannot fail on valid input")
        return output
    }
}

public enum ConstantTime {
    /// Compares two byte strings without an early exit, so the time taken does
    /// not reveal how long a matching prefix an attacker has guessed.
    public static func equals(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        guard lhs.count == rhs.count else { return false }
        if lhs.isEmpty { return true }
        return lhs.withUnsafeBytes { a in
            rhs.withUnsafeBytes { b in CRYPTO_memcmp(a.baseAddress, b.baseAddress, lhs.count) == 0 }
        }
    }
}

public enum SecureRandom {
    /// Bytes from OpenSSL's CSPRNG. Failure here means the process cannot
    /// make secrets safely, so it stops rather than continue with weak ones.
    public static func bytes(_ count: Int) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: count)
        guard count > 0 else { return output }
        precondition(RAND_bytes(&output, Int32(count)) == 1, "RAND_bytes failed: \(OpenSSLError.drainErrorQueue())")
        return output
    }

    /// A URL-safe random token carrying `byteCount * 8` bits of entropy.
    public static func token(byteCount: Int = 32) -> String {
        Base64URL.encode(bytes(byteCount))
    }
}
