import FoundationEssentials

/// An https URL split into what the connection and the request line need.
struct HTTPSTarget {
    let host: String
    let port: Int
    let hostHeader: String
    let pathAndQuery: String

    /// For messages: where a request went, without its path and query
    /// (which may carry a token, such as an `id_token_hint`).
    var origin: String { "https://\(hostHeader)" }

    init(_ url: String) throws {
        guard let components = URLComponents(string: url), components.scheme?.lowercased() == "https",
              var host = components.host, !host.isEmpty, components.user == nil, components.password == nil else {
            throw HTTPSClientError(.invalidURL, detail: "not an https URL with a host")
        }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        let port = components.port ?? 443
        guard (1...65535).contains(port) else { throw HTTPSClientError(.invalidURL, detail: "port \(port)") }
        let path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        let query = components.percentEncodedQuery.map { "?" + $0 } ?? ""
        // URLComponents refuses raw spaces and controls; this keeps the
        // request line safe even if that ever changes.
        guard (host + path + query).utf8.allSatisfy({ $0 > 32 && $0 < 127 }) else {
            throw HTTPSClientError(.invalidURL, detail: "control or non-ASCII character")
        }
        let bracketed = host.contains(":") ? "[\(host)]" : host
        self.host = host
        self.port = port
        self.hostHeader = port == 443 ? bracketed : "\(bracketed):\(port)"
        self.pathAndQuery = path + query
    }
}
