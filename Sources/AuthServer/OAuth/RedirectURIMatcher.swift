import IssuerStorage
/// Matching a requested redirect_uri against a client's registered ones.
public enum RedirectURIMatcher {
    /// RFC 6749 §3.1.2.3 and RFC 9700 §2.1: exact string comparison, here of
    /// the bytes (Swift's `==` would treat canonically equivalent spellings
    /// as equal). The one exception is RFC 8252 §7.3: "The authorization
    /// server MUST allow any port to be specified at the time of the request
    /// for loopback IP redirect URIs, to accommodate clients that obtain an
    /// available ephemeral port from the operating system at the time of the
    /// request."
    public static func matches(requested: String, registered: [String]) -> Bool {
        if registered.containsBytes(requested) { return true }
        guard let request = loopbackParts(requested) else { return false }
        return registered.contains { loopbackParts($0).map { $0.withoutPort.bytesEqual(request.withoutPort) } ?? false }
    }

    static let loopbackHosts = ["127.0.0.1", "[::1]"]

    /// For `http://127.0.0.1[:PORT]/path?query` or `http://[::1][:PORT]/...`:
    /// the URI with the port removed; nil for anything else. Parsed by hand,
    /// strictly: the host is one of the two literals and nothing else
    /// (`127.0.0.1.evil.com` and `user@` are not); a port is 1 to 5 digits
    /// without a leading zero, 1...65535 (`:`, `:0`, `:65536` and `:080`
    /// are refused rather than read as "no port" or as port 80); the rest is
    /// printable ASCII without a fragment or `@`.
    static func loopbackParts(_ uri: String) -> (withoutPort: String, port: Int?)? {
        let scheme = "http://"
        guard uri.utf8.starts(with: scheme.utf8),
              let host = loopbackHosts.first(where: { uri.utf8.dropFirst(scheme.utf8.count).starts(with: $0.utf8) }) else { return nil }
        var rest = uri.utf8.dropFirst(scheme.utf8.count + host.utf8.count)
        var port: Int?
        if rest.first == UInt8(ascii: ":") {
            let digits = rest.dropFirst().prefix { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
            guard (1...5).contains(digits.count), digits.first != UInt8(ascii: "0"),
                  let value = Int(String(decoding: digits, as: UTF8.self)), (1...65535).contains(value) else { return nil }
            port = value
            rest = rest.dropFirst(1 + digits.count)
        }
        guard rest.isEmpty || rest.first == UInt8(ascii: "/") || rest.first == UInt8(ascii: "?"),
              rest.allSatisfy({ (0x21...0x7E).contains($0) && $0 != UInt8(ascii: "#") && $0 != UInt8(ascii: "@") }) else { return nil }
        return (scheme + host + String(decoding: rest, as: UTF8.self), port)
    }
}
