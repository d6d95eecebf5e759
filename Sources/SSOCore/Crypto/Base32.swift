/// base32 (RFC 4648 §6), upper case, without padding: the form authenticator
/// apps expect in an `otpauth://` URI's `secret` parameter.
public enum Base32 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)

    public static func encode(_ bytes: [UInt8]) -> String {
        var output = [UInt8]()
        output.reserveCapacity((bytes.count * 8 + 4) / 5)
        var buffer: UInt32 = 0
        var bits = 0
        for byte in bytes {
            buffer = buffer << 8 | UInt32(byte)
            bits += 8
            while bits >= 5 {
                bits -= 5
                output.append(alphabet[Int(buffer >> UInt32(bits) & 31)])
            }
            buffer &= (1 << UInt32(bits)) - 1
        }
        // RFC 4648 §6: a final quantum of fewer than 40 bits is padded with
        // zero bits to a whole 5-bit group ("=" padding itself is left off).
        if bits > 0 { output.append(alphabet[Int(buffer << UInt32(5 - bits) & 31)]) }
        return String(decoding: output, as: UTF8.self)
    }

    /// Strict decoding of the unpadded form: upper-case alphabet only, a
    /// length no encoder produces is refused, and so are non-zero stray bits
    /// (RFC 4648 §3.5), so each byte string has exactly one encoding.
    public static func decode(_ text: String) -> [UInt8]? {
        guard [0, 2, 4, 5, 7].contains(text.utf8.count % 8) else { return nil }
        var output = [UInt8]()
        var buffer: UInt32 = 0
        var bits = 0
        for character in text.utf8 {
            guard let value = alphabet.firstIndex(of: character) else { return nil }
            buffer = buffer << 5 | UInt32(value)
            bits += 5
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: buffer >> UInt32(bits)))
                buffer &= (1 << UInt32(bits)) - 1
            }
        }
        guard buffer == 0 else { return nil }
        return output
    }
}
