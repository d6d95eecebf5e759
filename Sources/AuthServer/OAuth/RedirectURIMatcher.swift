import FoundationEssentials

/// Matching a requested redirect_uri against a client's registered ones.
public enum RedirectURIMatcher {
    /// RFC 6749 §3.1.2.3 and RFC 9700 §2.1: exact string comparison. The one
    /// exception is RFC 8252 §7.3: "The authorization server MUST allow any
    /// port to be specified at the time of the request for loopback IP
    /// redirect URIs, to accommodate clients that obtain an available
    /// ephemeral port from the operating system at the time of the request."
    public static func matches(requested: String, registered: [String]) -> Bool {
        if registered.contains(requested) { return true }
        guard let request = loopbackParts(requested) else { return false }
        return registered.contains { loopbackParts($0).map { $0.withoutPort == request.withoutPort } ?? false }
    }

    /// For `http://127.0.0.1:PORT/path?query` or `http://[::1]:PORT/...`:
    /// the URI with the port removed; nil for anything else.
    static func loopbackParts(_ uri: String) -> (withoutPort: String, port: Int?)? {
        guard uri.hasPrefix("http://"), !uri.contains("#"), !uri.contains("@"),
              let components = URLComponents(string: uri), components.scheme == "http",
              RedirectURIRules.isLoopbackHost(components.host) else { return nil }
        if let port = components.port, !(1...65535).contains(port) { return nil }
        var stripped = components
        stripped.port = nil
        guard let text = stripped.string else { return nil }
        return (text, components.port)
    }
}
