/// Cookie header parsing (RFC 6265 §5.4 as browsers send it) and Set-Cookie
/// building with the attributes DESIGN.md requires.
public enum CookieParser {
    /// At most this many cookies are read; a flood of them is not our cookie.
    static let maximumCookies = 50

    /// Parses `name=value; name2=value2`. The first occurrence of a name
    /// wins (RFC 6265 §5.4: more specific paths come first).
    public static func parse(_ header: String) -> [String: String] {
        var cookies: [String: String] = [:]
        guard header.utf8.count <= 16 * 1024 else { return cookies }
        for part in header.split(separator: ";", omittingEmptySubsequences: true).prefix(maximumCookies) {
            guard let equals = part.firstIndex(of: "=") else { continue }
            let name = part[..<equals].trimmingASCIISpaces()
            var value = part[part.index(after: equals)...].trimmingASCIISpaces()
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = value.dropFirst().dropLast() }
            guard !name.isEmpty, cookies[String(name)] == nil else { continue }
            cookies[String(name)] = String(value)
        }
        return cookies
    }
}

public struct SetCookie: Sendable {
    public enum SameSite: String, Sendable { case lax = "Lax", strict = "Strict" }
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

extension Substring {
    func trimmingASCIISpaces() -> Substring {
        var slice = self
        while let first = slice.first, first == " " || first == "\t" { slice = slice.dropFirst() }
        while let last = slice.last, last == " " || last == "\t" { slice = slice.dropLast() }
        return slice
    }
}
