/// Cookie header parsing (RFC 6265 §5.4 as browsers send it) and Set-Cookie
/// building with the attributes docs/ARCHITECTURE.md requires.
public enum CookieParser {
    /// At most this many cookies are read; a flood of them is not our cookie.
    static let maximumCookies = 50

    /// Parses `name=value; name2=value2`. The first occurrence of a name
    /// wins (RFC 6265 §5.4: more specific paths come first). Splits on bytes,
    /// not Characters: a combining mark after `;` must not glue two cookies.
    public static func parse(_ header: String) -> [String: String] {
        var cookies: [String: String] = [:]
        guard header.utf8.count <= 16 * 1024 else { return cookies }
        let semicolon = UInt8(ascii: ";"), equals = UInt8(ascii: "="), quote = UInt8(ascii: "\"")
        for part in header.utf8.split(separator: semicolon, omittingEmptySubsequences: true).prefix(maximumCookies) {
            guard let separator = part.firstIndex(of: equals) else { continue }
            let name = trimmingSpaces(part[..<separator])
            var value = trimmingSpaces(part[part.index(after: separator)...])
            if value.count >= 2, value.first == quote, value.last == quote { value = value.dropFirst().dropLast() }
            let nameText = String(Substring(name)), valueText = String(Substring(value))
            guard !nameText.isEmpty, cookies[nameText] == nil else { continue }
            cookies[nameText] = valueText
        }
        return cookies
    }

    static func trimmingSpaces(_ bytes: Substring.UTF8View) -> Substring.UTF8View {
        var slice = bytes
        while let first = slice.first, first == 0x20 || first == 0x09 { slice = slice.dropFirst() }
        while let last = slice.last, last == 0x20 || last == 0x09 { slice = slice.dropLast() }
        return slice
    }
}

public struct SetCookie: Sendable {
    /// `none` only for a cookie a cross-site POST must carry (an upstream
    /// provider's form_post callback); always with Secure.
    public enum SameSite: String, Sendable { case lax = "Lax", strict = "Strict", none = "None" }
    public var name: String
    public var value: String
    public var path: String
    public var maxAge: Int?
    public var sameSite: SameSite

    /// Cookies are always Secure and HttpOnly and host-only (no Domain
    /// attribute), so no script, plain-HTTP page or sibling host can read them.
    public init(name: String, value: String, path: String = "/", maxAge: Int? = nil, sameSite: SameSite = .lax) {
        self.name = name
        self.value = value
        self.path = path
        self.maxAge = maxAge
        self.sameSite = sameSite
    }

    /// A cookie that deletes `name` at `path`.
    public static func expired(name: String, path: String = "/") -> SetCookie {
        SetCookie(name: name, value: "", path: path, maxAge: 0)
    }

    public var headerValue: String {
        var parts = ["\(name)=\(value)", "Path=\(path)", "Secure", "HttpOnly", "SameSite=\(sameSite.rawValue)"]
        if let maxAge { parts.append("Max-Age=\(maxAge)") }
        return parts.joined(separator: "; ")
    }
}
