/// HOTP (RFC 4226) and TOTP (RFC 6238) with HMAC-SHA-1, the parameters every
/// authenticator app uses by default: 30-second steps, 6 digits.
public enum TOTP {
    /// RFC 6238 §5.2: "We recommend a default time-step size of 30 seconds."
    public static let period: Int64 = 30
    public static let digits = 6
    /// RFC 4226 §4 R6: a shared secret of at least 128 bits; §4 recommends
    /// 160 bits, the HMAC-SHA-1 output size.
    public static let secretByteCount = 20

    /// RFC 6238 §4.2: "T = (Current Unix time - T0) / X", T0 = 0, rounded down.
    public static func step(at unixTime: Int64, period: Int64 = period) -> Int64 {
        unixTime >= 0 ? unixTime / period : (unixTime - period + 1) / period
    }

    /// RFC 6238 §4.2: "TOTP = HOTP(K, T)".
    public static func code(secret: [UInt8], step: Int64, digits: Int = digits) -> String {
        hotp(secret: secret, counter: UInt64(bitPattern: step), digits: digits)
    }

    /// RFC 4226 §5.3: HS = HMAC-SHA-1(K, C) over the 8-byte big-endian
    /// counter, then dynamic truncation, then `Snum mod 10^Digit`, written
    /// with leading zeros.
    public static func hotp(secret: [UInt8], counter: UInt64, digits: Int = digits) -> String {
        precondition((6...9).contains(digits), "RFC 4226 §5.3: 6 to 9 digits (10^9 fits in 31 bits)")
        let message = (0..<8).map { UInt8(truncatingIfNeeded: counter >> (56 - 8 * UInt64($0))) }
        let hash = HMACSHA1.authenticate(message, key: secret)
        // RFC 4226 §5.3: "Let OffsetBits be the low-order 4 bits of String[19]
        // ... Return the Last 31 bits of P" (the top bit is masked so the
        // number is the same whether it is read as signed or unsigned).
        let offset = Int(hash[19] & 0x0f)
        let binary = UInt32(hash[offset] & 0x7f) << 24 | UInt32(hash[offset + 1]) << 16
            | UInt32(hash[offset + 2]) << 8 | UInt32(hash[offset + 3])
        var modulus: UInt32 = 1
        for _ in 0..<digits { modulus *= 10 }
        let value = String(binary % modulus)
        return String(repeating: "0", count: digits - value.count) + value
    }
}
