/// RFC 6750 syntax shared by every Bearer-protected endpoint (the issuer's
/// userinfo and the resource servers), so both read and write it alike.
public enum BearerSyntax {
    /// RFC 6750 §2.1: b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
    public static func isB64Token(_ bytes: Substring.UTF8View) -> Bool {
        guard let first = bytes.first, first != UInt8(ascii: "=") else { return false }
        var seenPadding = false
        for byte in bytes {
            if byte == UInt8(ascii: "=") { seenPadding = true; continue }
            guard !seenPadding else { return false }
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "+"), UInt8(ascii: "/"):
                continue
            default:
                return false
            }
        }
        return true
    }

    /// RFC 6750 §3: error_description and scope values "MUST NOT include
    /// characters outside the set %x20-21 / %x23-5B / %x5D-7E", i.e. no
    /// quote, backslash, control or non-ASCII character.
    public static func quotable(_ text: String) -> String {
        String(decoding: text.utf8.map { byte in
            (byte >= 0x20 && byte <= 0x7E && byte != 0x22 && byte != 0x5C) ? byte : UInt8(ascii: "?")
        }, as: UTF8.self)
    }
}
