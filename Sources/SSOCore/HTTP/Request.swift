import FoundationEssentials

/// One HTTP request as the FastCGI runtime hands it to a responder: every
/// value copied into Swift before libfcgi reuses its buffers.
public struct Request: Sendable {
    public var method: String
    /// The path without the query string, as nginx decoded it (`DOCUMENT_URI`).
    public var path: String
    /// The raw query string, still percent-encoded.
    public var query: String
    /// Header names in lower case (`content-type`, `authorization`, ...).
    public var headers: [String: String]
    public var body: [UInt8]
    public var remoteAddress: String
    /// nginx's `$request_id`, echoed in logs and the `X-Request-Id` header.
    public var requestID: String

    public init(method: String, path: String, query: String = "", headers: [String: String] = [:],
                body: [UInt8] = [], remoteAddress: String = "127.0.0.1", requestID: String = "") {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
        self.remoteAddress = remoteAddress
        self.requestID = requestID
    }

    /// Header names are case-insensitive (RFC 9110 §5.1) and stored in
    /// lower case; a name asked in lower case already, as the code asks,
    /// skips `lowercased()`, which was a few percent of an API call.
    public func header(_ name: String) -> String? {
        name.utf8.contains(where: { (0x41...0x5A).contains($0) }) ? headers[name.lowercased()] : headers[name]
    }

    public var cookies: [String: String] { CookieParser.parse(header("cookie") ?? "") }

    public func queryParameters(limits: FormLimits = .standard) throws -> FormParameters {
        try FormParser.parse(Array(query.utf8), limits: limits)
    }

    /// The body as application/x-www-form-urlencoded. Any other content type
    /// is refused (RFC 6749 §3.2: the token endpoint takes only this one).
    public func formParameters(limits: FormLimits = .standard) throws -> FormParameters {
        let mediaType = (header("content-type") ?? "").split(separator: ";").first.map {
            $0.trimmingASCIIWhitespace().lowercased()
        }
        guard mediaType == "application/x-www-form-urlencoded" else {
            throw FormError(.unsupportedMediaType, detail: "content type \(header("content-type") ?? "none")")
        }
        return try FormParser.parse(body, limits: limits)
    }
}
