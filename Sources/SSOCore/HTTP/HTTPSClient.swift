/// A small blocking HTTPS client for talking to another Gatehouse origin:
/// the resource servers fetch the issuer's JWKS with it, and gatehouse-login
/// plays a native app against the issuer and the APIs. One request per
/// connection, no pooling, no redirects followed.
///
/// No URLSession: FoundationNetworking alone would cost a responder more than
/// its memory budget, and on Linux it runs on libcurl with the system CA
/// bundle and no way to trust another CA (a dev stack's local CA would need
/// root and update-ca-certificates). No libcurl either: a TCP socket with
/// timeouts, OpenSSL for TLS 1.2+ with peer and host name verification, and
/// HTTP/1.0 so the reply is never chunked or kept alive.
///
/// Each call makes its own TLS context: calls are rare (a JWKS fetch an hour,
/// a handful per sign-in), and a CA file that appears or changes later is
/// picked up.
public struct HTTPSClient: Sendable {
    /// PEM file of trusted CAs; nil trusts the system's default CA paths.
    public var caFile: String?
    public var connectTimeout: Double
    /// Longest wait for any one read or write.
    public var ioTimeout: Double
    /// Longest the whole exchange may take, however slowly bytes trickle in.
    public var totalTimeout: Double
    /// Status line, headers and body together.
    public var maximumResponseBytes: Int
    public var userAgent: String

    public init(caFile: String? = nil, connectTimeout: Double = 3, ioTimeout: Double = 3, totalTimeout: Double = 6,
                maximumResponseBytes: Int = 256 * 1024, userAgent: String = "gatehouse") {
        self.caFile = caFile
        self.connectTimeout = connectTimeout
        self.ioTimeout = ioTimeout
        self.totalTimeout = totalTimeout
        self.maximumResponseBytes = maximumResponseBytes
        self.userAgent = userAgent
    }

    public func get(_ url: String, headers: [(name: String, value: String)] = []) throws -> HTTPSResponse {
        try send(HTTPSRequest(url: url, headers: headers))
    }

    /// Whatever the status, the reply comes back: a 4xx with an OAuth error
    /// body is an answer, not a failure of the exchange. Throws
    /// `HTTPSClientError` only when there is no complete reply.
    public func send(_ request: HTTPSRequest) throws -> HTTPSResponse {
        defer { _ = OpenSSLError.drainErrorQueue() }
        let target = try HTTPSTarget(request.url)
        // Checked before any connection: a bad header or CA file is this
        // side's mistake, and says so without touching the network.
        let message = try request.message(for: target, userAgent: userAgent)
        let context = try TLSClientContext(caFile: caFile)
        let deadline = MonotonicDeadline(seconds: totalTimeout)
        let socket = try TCPSocket.connect(host: target.host, port: target.port,
                                           connectTimeout: min(connectTimeout, totalTimeout), ioTimeout: ioTimeout)
        let session = try TLSClientSession(context: context, socket: socket, host: target.host)
        try session.write(message, deadline: deadline)
        return try readResponse(session, bodiless: request.method == "HEAD", deadline: deadline)
    }

    /// Reads until the body announced by Content-Length is complete, or to
    /// the peer's close_notify when there is none. A TCP close without
    /// close_notify is a truncation (OpenSSL 3 reports it as an error).
    private func readResponse(_ session: TLSClientSession, bodiless: Bool, deadline: MonotonicDeadline) throws -> HTTPSResponse {
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        var head: HTTPResponseHead?
        while true {
            let count = try session.read(into: &chunk, deadline: deadline)
            if count == 0 { break }
            received.append(contentsOf: chunk.prefix(count))
            guard received.count <= maximumResponseBytes else {
                throw HTTPSClientError(.responseTooLarge, detail: "over \(maximumResponseBytes) bytes")
            }
            if head == nil { head = try HTTPResponseHead.parse(received, bodiless: bodiless) }
            if let head, let length = head.contentLength, received.count >= head.bodyOffset + length { break }
        }
        guard let head = try head ?? HTTPResponseHead.parse(received, bodiless: bodiless) else {
            throw HTTPSClientError(.malformedResponse, detail: "connection closed before the end of the headers")
        }
        return try head.response(from: received)
    }
}
