import SSOCore

/// One-time recovery codes for an account with TOTP: the way in when the
/// phone with the authenticator app is lost. Ten are made when TOTP is
/// enrolled (and again on request from /account), shown once, and stored
/// as SHA-256 hashes only; each signs in once in place of a TOTP code.
///
/// A code is 80 random bits written as sixteen characters of Crockford's
/// Base32 in groups of four (`7k2m-q9xd-…`): long enough that an unsalted
/// SHA-256 is as safe as the issuer's other stored secrets (no offline
/// search of 2^80), short enough to type from paper. Typing is forgiving
/// the way Crockford's alphabet intends: case, spaces and hyphens are
/// ignored, and `o`, `i` and `l` read as `0`, `1` and `1`.
public enum RecoveryCodes {
    public static let count = 10
    static let alphabet = Array("0123456789abcdefghjkmnpqrstvwxyz".utf8)
    static let characters = 16

    /// `count` fresh codes, formatted for showing.
    public static func generate() -> [String] {
        (0..<count).map { _ in format(encode(SecureRandom.bytes(characters * 5 / 8))) }
    }

    /// The hash stored for `code` (as shown or as typed), nil when it
    /// cannot be a code: then nothing needs looking up.
    public static func hash(_ code: String) -> [UInt8]? {
        normalized(code).map { SHA256.hash($0) }
    }

    /// The sixteen canonical characters, or nil.
    static func normalized(_ typed: String) -> [UInt8]? {
        // A form field: bound the work before looking at each byte.
        guard typed.utf8.count <= 64 else { return nil }
        var result: [UInt8] = []
        for byte in typed.utf8 where byte != UInt8(ascii: "-") && byte != UInt8(ascii: " ") {
            var character = byte
            if character >= UInt8(ascii: "A") && character <= UInt8(ascii: "Z") { character += 32 }
            switch character {
            case UInt8(ascii: "o"): character = UInt8(ascii: "0")
            case UInt8(ascii: "i"), UInt8(ascii: "l"): character = UInt8(ascii: "1")
            default: break
            }
            guard alphabet.contains(character) else { return nil }
            result.append(character)
        }
        return result.count == characters ? result : nil
    }

    /// Five bits per character, most significant first.
    static func encode(_ bytes: [UInt8]) -> [UInt8] {
        var output: [UInt8] = [], buffer = 0, bits = 0
        for byte in bytes {
            buffer = buffer << 8 | Int(byte)
            bits += 8
            while bits >= 5 {
                bits -= 5
                output.append(alphabet[(buffer >> bits) & 31])
            }
        }
        return output
    }

    static func format(_ characters: [UInt8]) -> String {
        stride(from: 0, to: characters.count, by: 4).map { String(decoding: characters[$0..<min($0 + 4, characters.count)], as: UTF8.self) }
            .joined(separator: "-")
    }
}
