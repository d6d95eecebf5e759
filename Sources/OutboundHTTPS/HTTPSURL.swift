import FoundationEssentials

/// An https URL checked before libcurl sees it: scheme https, a host, no
/// user information, nothing but printable ASCII. libcurl is also limited
/// to https (CURLOPT_PROTOCOLS_STR), so a URL that slipped past this check
/// still could not reach file://, smtp:// or plain http://.
struct HTTPSURL {
    let text: String
    /// For messages: where a request went, without its path and query
    /// (which may carry a token, such as an `id_token_hint`).
    let origin: String

    init(_ url: String) throws {
        // Plain http is refused for every host, loopback included: every
        // peer Gatehouse talks to (its own issuer, the resource servers,
        // upstream providers, back-channel receivers) is served over TLS.
        guard let components = URLComponents(string: url), components.scheme?.lowercased() == "https",
              let host = components.host, !host.isEmpty, components.user == nil, components.password == nil else {
            throw HTTPSClientError(.invalidURL, detail: "not an https URL with a host")
        }
        if let port = components.port, !(1...65535).contains(port) {
            throw HTTPSClientError(.invalidURL, detail: "port \(port)")
        }
        // URLComponents refuses raw spaces and controls; this keeps them
        // out of the request line even if that ever changes.
        guard url.utf8.allSatisfy({ $0 > 32 && $0 < 127 }) else {
            throw HTTPSClientError(.invalidURL, detail: "control or non-ASCII character")
        }
        let bracketed = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        text = url
        let port = components.port.flatMap { $0 == 443 ? nil : $0 }
        origin = "https://" + (port.map { "\(bracketed):\($0)" } ?? bracketed)
    }
}
