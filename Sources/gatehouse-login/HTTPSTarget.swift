import Foundation

/// An https URL split into what the connection and the request line need.
struct HTTPSTarget {
    let host: String
    let port: Int
    let hostHeader: String
    let pathAndQuery: String

    var origin: String { "https://\(hostHeader)" }

    init(_ url: String) throws {
        guard let components = URLComponents(string: url), components.scheme?.lowercased() == "https",
              var host = components.host, !host.isEmpty, components.user == nil, components.password == nil else {
            throw ToolError("not an https URL with a host: \(url)")
        }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        let port = components.port ?? 443
        guard (1...65535).contains(port) else { throw ToolError("bad port in \(url)") }
        let path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        let query = components.percentEncodedQuery.map { "?" + $0 } ?? ""
        guard (host + path + query).utf8.allSatisfy({ $0 > 32 && $0 < 127 }) else { throw ToolError("control or non-ASCII character in \(url)") }
        let bracketed = host.contains(":") ? "[\(host)]" : host
        self.host = host
        self.port = port
        hostHeader = port == 443 ? bracketed : "\(bracketed):\(port)"
        pathAndQuery = path + query
    }
}
