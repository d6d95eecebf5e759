import SSOCore

/// One request for `HTTPSClient.send`: a method, header fields and a body.
/// libcurl owns the message framing (Host, Content-Length, Connection), so
/// those cannot be set here.
public struct HTTPSRequest: Sendable {
    public var method: String
    /// An https URL; its path and query go on the request line as given.
    public var url: String
    /// Sent in this order. Without an Accept field, `Accept: application/json`
    /// is sent: every peer Gatehouse calls answers JSON.
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]

    public init(method: String = "GET", url: String, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }

    /// An application/x-www-form-urlencoded POST (RFC 6749 §4.1.3, RFC 7009 §2.1,
    /// OpenID Connect Back-Channel Logout §2.5).
    public static func form(_ url: String, _ fields: [(String, String)], headers: [(name: String, value: String)] = []) -> HTTPSRequest {
        HTTPSRequest(method: "POST", url: url, headers: [("Content-Type", "application/x-www-form-urlencoded")] + headers,
                     body: Array(FormParser.encode(fields).utf8))
    }

    /// `https://host[:port]` for messages and logs: never the path or query,
    /// which may carry a token (an `id_token_hint`, say). nil for a URL the
    /// client would refuse.
    public var origin: String? { try? HTTPSURL(url).origin }

    /// Fields libcurl writes itself; a second copy would make the message
    /// ambiguous (RFC 9112 §6.3: request smuggling).
    static let framingFields: Set<String> = ["host", "connection", "content-length", "transfer-encoding", "expect"]

    /// The header lines for CURLOPT_HTTPHEADER, checked: libcurl sends
    /// them as given, so a CR or LF in a value would start a header (or a
    /// request) of the caller's making.
    func headerLines() throws -> [String] {
        // RFC 9110 §9.1: method = token.
        guard Self.isToken(method) else { throw HTTPSClientError(.invalidRequest, detail: "bad method") }
        var lines: [String] = []
        for (name, value) in headers {
            guard Self.isToken(name), !Self.framingFields.contains(name.lowercased()) else {
                throw HTTPSClientError(.invalidRequest, detail: "header name \(name.prefix(64))")
            }
            // RFC 9110 §5.5: CR, LF and NUL are never valid in a field value.
            guard value.utf8.allSatisfy({ $0 == 9 || ($0 >= 32 && $0 != 127) }) else {
                throw HTTPSClientError(.invalidRequest, detail: "control character in the value of \(name)")
            }
            // "Name:" alone would tell libcurl to drop a header, not send an empty one.
            lines.append(value.isEmpty ? "\(name);" : "\(name): \(value)")
        }
        if !headers.contains(where: { $0.name.lowercased() == "accept" }) { lines.append("Accept: application/json") }
        // No `Expect: 100-continue` for a body: one round trip less, and a
        // server that ignores it would cost a second's wait.
        lines.append("Expect:")
        return lines
    }

    /// RFC 9110 §5.6.2: token = 1*tchar.
    static func isToken(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }
}
