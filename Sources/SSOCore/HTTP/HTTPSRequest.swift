/// One request for `HTTPSClient.send`: any method, header fields and a body.
/// The client owns the message framing (Host, Connection, Content-Length),
/// so those cannot be set here.
public struct HTTPSRequest: Sendable {
    public var method: String
    /// An https URL; its path and query go on the request line as given.
    public var url: String
    /// Sent in this order. Without an Accept field, `Accept: application/json`
    /// is sent: every Gatehouse peer answers JSON.
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]

    public init(method: String = "GET", url: String, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }

    /// An application/x-www-form-urlencoded POST (RFC 6749 §4.1.3, RFC 7009 §2.1).
    public static func form(_ url: String, _ fields: [(String, String)], headers: [(name: String, value: String)] = []) -> HTTPSRequest {
        HTTPSRequest(method: "POST", url: url, headers: [("Content-Type", "application/x-www-form-urlencoded")] + headers,
                     body: Array(FormParser.encode(fields).utf8))
    }

    /// `https://host[:port]` for messages and logs: never the path or query,
    /// which may carry a token (an `id_token_hint`, say). nil for a URL the
    /// client would refuse.
    public var origin: String? { try? HTTPSTarget(url).origin }

    /// Fields the client writes itself; a second copy would make the
    /// message ambiguous (RFC 9112 §6.3: request smuggling).
    static let framingFields: Set<String> = ["host", "connection", "content-length", "transfer-encoding"]

    /// The request line and header section (RFC 9112 §3, §5), then the body.
    /// HTTP/1.0, so the reply is never chunked and the connection never kept.
    func message(for target: HTTPSTarget, userAgent: String) throws -> [UInt8] {
        // RFC 9110 §9.1: method = token.
        guard Self.isToken(method) else { throw HTTPSClientError(.invalidRequest, detail: "bad method") }
        var lines = ["\(method) \(target.pathAndQuery) HTTP/1.0", "Host: \(target.hostHeader)", "User-Agent: \(userAgent)"]
        for (name, value) in headers {
            guard Self.isToken(name), !Self.framingFields.contains(name.lowercased()) else {
                throw HTTPSClientError(.invalidRequest, detail: "header name \(name.prefix(64))")
            }
            // RFC 9110 §5.5: CR, LF and NUL are never valid in a field value;
            // one would let a value smuggle in a header or a second request.
            guard value.utf8.allSatisfy({ $0 == 9 || ($0 >= 32 && $0 != 127) }) else {
                throw HTTPSClientError(.invalidRequest, detail: "control character in the value of \(name)")
            }
            lines.append("\(name): \(value)")
        }
        if !headers.contains(where: { $0.name.lowercased() == "accept" }) { lines.append("Accept: application/json") }
        // RFC 9110 §8.6: a length for any content, and for an empty body of a
        // method that expects one (some servers answer 411 otherwise).
        if !body.isEmpty || ["POST", "PUT", "PATCH"].contains(method) { lines.append("Content-Length: \(body.count)") }
        lines.append("Connection: close")
        return Array((lines.joined(separator: "\r\n") + "\r\n\r\n").utf8) + body
    }

    /// RFC 9110 §5.6.2: token = 1*tchar.
    static func isToken(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }
}
