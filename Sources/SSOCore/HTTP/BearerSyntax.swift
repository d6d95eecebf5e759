/// RFC 6750 syntax shared by every Bearer-protected endpoint (the issuer's
/// userinfo and the resource servers), so both read and write it alike.
public enum BearerSyntax {
    /// RFC 6750 §2.1: b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
    public static func isB64Token(_ bytes: Substring.UTF8View) -> Bool {
        // Checked on the contiguous bytes: walking a Substring's
        // UTF8View byte by byte was 12% of a resource server's instructions.
        bytes.withContiguousStorageIfAvailable(isB64Token(buffer:)) ?? Array(bytes).withUnsafeBufferPointer(isB64Token(buffer:))
    }

    static func isB64Token(buffer: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let first = buffer.first, first != UInt8(ascii: "=") else { return false }
        var index = 0
        while index < buffer.count, isTokenCharacter(buffer[index]) { index += 1 }
        while index < buffer.count, buffer[index] == UInt8(ascii: "=") { index += 1 }
        return index == buffer.count
    }

    @inline(__always)
    private static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "+"), UInt8(ascii: "/"):
            return true
        default:
            return false
        }
    }

    /// The `WWW-Authenticate` value of RFC 6750 §3, shared by the issuer's
    /// userinfo and the resource servers (each decides which parameters its
    /// error carries). No `error` means no credentials were sent, and RFC
    /// 6750 §3.1 says the challenge then carries no error information.
    public static func challenge(realm: String, error: String? = nil, description: String? = nil, scope: String? = nil) -> String {
        var parameters = ["realm=\"\(quotable(realm))\""]
        if let error { parameters.append("error=\"\(error)\"") }
        if let description { parameters.append("error_description=\"\(quotable(description))\"") }
        if let scope { parameters.append("scope=\"\(quotable(scope))\"") }
        return "Bearer " + parameters.joined(separator: ", ")
    }

    private struct ErrorBody: Encodable {
        let error: String
        let error_description: String
    }

    /// The JSON body beside the challenge: `{"error", "error_description"}`.
    public static func errorBody(error: String, description: String) -> [UInt8] {
        (try? JSON.encode(ErrorBody(error: error, error_description: description))) ?? Array("{}".utf8)
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
