import COpenSSL
import FoundationEssentials
import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// What a GET over HTTPS returned.
public struct HTTPSResponse: Sendable {
    public let status: Int
    /// Header names in lower case; a repeated header keeps its last value.
    public let headers: [String: String]
    public let body: [UInt8]

    public init(status: Int, headers: [String: String], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

public struct HTTPSClientError: Error, CustomStringConvertible {
    public enum Code: String, Sendable {
        case invalidURL, resolve, connect, tls, certificate, timeout, io, responseTooLarge, malformedResponse
    }
    public let code: Code
    /// Log-only detail (OpenSSL's drained error queue, errno text, ...).
    public let detail: String
    public init(_ code: Code, detail: String) { self.code = code; self.detail = detail }
    public var description: String { "\(code.rawValue): \(detail)" }
}

/// A small blocking HTTPS GET for fetching documents such as a JWKS from
/// another Gatehouse origin. No URLSession (FoundationNetworking alone would
/// cost the responder more than its memory budget) and no libcurl: a TCP
/// socket with timeouts, OpenSSL for TLS 1.2+ with peer and host name
/// verification, and HTTP/1.0 so the reply is never chunked or kept alive.
///
/// Each call makes its own TLS context: calls are rare (a JWKS fetch an hour),
/// and a CA file that appears or changes later is picked up.
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

    public init(caFile: String? = nil, connectTimeout: Double = 3, ioTimeout: Double = 3, totalTimeout: Double = 6,
                maximumResponseBytes: Int = 256 * 1024) {
        self.caFile = caFile
        self.connectTimeout = connectTimeout
        self.ioTimeout = ioTimeout
        self.totalTimeout = totalTimeout
        self.maximumResponseBytes = maximumResponseBytes
    }

    public func get(_ url: String) throws -> HTTPSResponse {
        defer { _ = OpenSSLError.drainErrorQueue() }
        let target = try HTTPSTarget(url)
        let deadline = MonotonicDeadline(seconds: totalTimeout)
        let socket = try TCPSocket.connect(host: target.host, port: target.port,
                                           connectTimeout: min(connectTimeout, totalTimeout), ioTimeout: ioTimeout)
        let context = try TLSClientContext(caFile: caFile)
        let session = try TLSClientSession(context: context, socket: socket, host: target.host)
        let request = "GET \(target.pathAndQuery) HTTP/1.0\r\nHost: \(target.hostHeader)\r\n"
            + "Accept: application/json\r\nUser-Agent: gatehouse\r\nConnection: close\r\n\r\n"
        try session.write(Array(request.utf8), deadline: deadline)
        return try readResponse(session, deadline: deadline)
    }

    /// Reads until the body announced by Content-Length is complete, or to
    /// the peer's close_notify when there is none. A TCP close without
    /// close_notify is a truncation (OpenSSL 3 reports it as an error).
    private func readResponse(_ session: TLSClientSession, deadline: MonotonicDeadline) throws -> HTTPSResponse {
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
            if head == nil { head = try HTTPResponseHead.parse(received) }
            if let head, let length = head.contentLength, received.count >= head.bodyOffset + length { break }
        }
        guard let head = try head ?? HTTPResponseHead.parse(received) else {
            throw HTTPSClientError(.malformedResponse, detail: "connection closed before the end of the headers")
        }
        return try head.response(from: received)
    }
}

/// An https URL split into what the connection and the request line need.
struct HTTPSTarget {
    let host: String
    let port: Int
    let hostHeader: String
    let pathAndQuery: String

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

/// The status line and headers of a response (RFC 9112 §4, §5), parsed as
/// soon as the blank line that ends them has arrived.
struct HTTPResponseHead {
    let status: Int
    let headers: [String: String]
    let bodyOffset: Int
    let contentLength: Int?

    /// nil while the blank line has not arrived yet.
    static func parse(_ bytes: [UInt8]) throws -> HTTPResponseHead? {
        guard let end = headerEnd(bytes) else { return nil }
        guard let text = String(validating: bytes[..<end], as: UTF8.self) else {
            throw HTTPSClientError(.malformedResponse, detail: "headers are not UTF-8")
        }
        var lines = text.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard statusLine.count >= 2, statusLine[0] == "HTTP/1.0" || statusLine[0] == "HTTP/1.1",
              statusLine[1].utf8.count == 3, let status = Int(statusLine[1]), (100...599).contains(status) else {
            throw HTTPSClientError(.malformedResponse, detail: "bad status line")
        }
        var headers: [String: String] = [:]
        for line in lines where !line.isEmpty {
            // RFC 9112 §5.2: obsolete line folding is refused, not unfolded.
            guard let colon = line.firstIndex(of: ":"), !line.hasPrefix(" "), !line.hasPrefix("\t") else {
                throw HTTPSClientError(.malformedResponse, detail: "bad header line")
            }
            let name = line[..<colon].lowercased()
            guard !name.isEmpty, !name.contains(" ") else { throw HTTPSClientError(.malformedResponse, detail: "bad header name") }
            headers[name] = line[line.index(after: colon)...].trimmingASCIIWhitespace()
        }
        // An HTTP/1.0 request is never answered chunked; anything else is a
        // framing we do not implement.
        if let coding = headers["transfer-encoding"], coding.lowercased() != "identity" {
            throw HTTPSClientError(.malformedResponse, detail: "transfer-encoding \(coding)")
        }
        var contentLength: Int?
        if let value = headers["content-length"] {
            guard let length = Int(value), length >= 0 else { throw HTTPSClientError(.malformedResponse, detail: "bad content-length") }
            contentLength = length
        }
        return HTTPResponseHead(status: status, headers: headers, bodyOffset: end + 4, contentLength: contentLength)
    }

    /// Offset of the `\r\n\r\n` that ends the headers.
    static func headerEnd(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 0...(bytes.count - 4)
        where bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
            return index
        }
        return nil
    }

    func response(from bytes: [UInt8]) throws -> HTTPSResponse {
        var body = Array(bytes[min(bodyOffset, bytes.count)...])
        if let contentLength {
            guard body.count >= contentLength else {
                throw HTTPSClientError(.malformedResponse, detail: "body truncated: \(body.count) of \(contentLength) bytes")
            }
            body = Array(body.prefix(contentLength))
        }
        return HTTPSResponse(status: status, headers: headers, body: body)
    }
}

/// A point on the monotonic clock after which the exchange is abandoned.
struct MonotonicDeadline {
    let uptimeNanoseconds: UInt64

    init(seconds: Double) {
        uptimeNanoseconds = DispatchTime.now().uptimeNanoseconds + UInt64(max(0, seconds) * 1e9)
    }

    var remainingSeconds: Double {
        let now = DispatchTime.now().uptimeNanoseconds
        return now >= uptimeNanoseconds ? 0 : Double(uptimeNanoseconds - now) / 1e9
    }
}

/// Owns one connected TCP socket, closed with this object.
final class TCPSocket {
    let descriptor: Int32
    private let ioTimeout: Double

    private init(descriptor: Int32, ioTimeout: Double) {
        self.descriptor = descriptor
        self.ioTimeout = ioTimeout
    }

    deinit { close(descriptor) }

    /// Tries each address the name resolves to, in resolver order. On Linux a
    /// blocking connect() honours SO_SNDTIMEO, which bounds the handshake.
    static func connect(host: String, port: Int, connectTimeout: Double, ioTimeout: Double) throws -> TCPSocket {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_protocol = Int32(IPPROTO_TCP)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            throw HTTPSClientError(.resolve, detail: "\(host): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(list) }
        var failures: [String] = []
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let entry = cursor {
            cursor = entry.pointee.ai_next
            let fd = socket(entry.pointee.ai_family, entry.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue), entry.pointee.ai_protocol)
            guard fd >= 0 else { failures.append(errnoText()); continue }
            let candidate = TCPSocket(descriptor: fd, ioTimeout: ioTimeout)
            candidate.setTimeout(SO_SNDTIMEO, seconds: connectTimeout)
            if Glibc.connect(fd, entry.pointee.ai_addr, entry.pointee.ai_addrlen) == 0 {
                candidate.setTimeout(SO_SNDTIMEO, seconds: ioTimeout)
                candidate.setTimeout(SO_RCVTIMEO, seconds: ioTimeout)
                return candidate
            }
            failures.append(errno == EINPROGRESS || errno == EAGAIN ? "timed out" : errnoText())
        }
        throw HTTPSClientError(failures.allSatisfy { $0 == "timed out" } && !failures.isEmpty ? .timeout : .connect,
                               detail: "\(host):\(port): \(failures.joined(separator: "; "))")
    }

    /// Shortens the next read or write so it cannot outlast the deadline.
    func limit(to deadline: MonotonicDeadline) throws {
        let remaining = deadline.remainingSeconds
        guard remaining > 0 else { throw HTTPSClientError(.timeout, detail: "exchange took too long") }
        setTimeout(SO_RCVTIMEO, seconds: min(ioTimeout, remaining))
        setTimeout(SO_SNDTIMEO, seconds: min(ioTimeout, remaining))
    }

    private func setTimeout(_ option: Int32, seconds: Double) {
        let clamped = max(seconds, 0.001)
        var value = timeval(tv_sec: Int(clamped), tv_usec: Int((clamped - clamped.rounded(.down)) * 1_000_000))
        _ = setsockopt(descriptor, SOL_SOCKET, option, &value, socklen_t(MemoryLayout<timeval>.size))
    }
}

private func errnoText() -> String { String(cString: strerror(errno)) }

/// Owns one `SSL_CTX`: TLS 1.2 or later, peer verification on.
final class TLSClientContext {
    let handle: OpaquePointer

    init(caFile: String?) throws {
        guard let context = SSL_CTX_new(TLS_client_method()) else {
            throw HTTPSClientError(.tls, detail: "SSL_CTX_new: \(OpenSSLError.drainErrorQueue())")
        }
        handle = context
        // From here on a throw still runs deinit, which frees the context.
        guard gatehouse_ssl_ctx_set_min_proto_version(context, TLS1_2_VERSION) == 1 else {
            throw HTTPSClientError(.tls, detail: "min protocol: \(OpenSSLError.drainErrorQueue())")
        }
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        let loaded = caFile.map { SSL_CTX_load_verify_file(context, $0) } ?? SSL_CTX_set_default_verify_paths(context)
        guard loaded == 1 else {
            throw HTTPSClientError(.certificate, detail: "cannot load CA \(caFile ?? "default paths"): \(OpenSSLError.drainErrorQueue())")
        }
    }

    deinit { SSL_CTX_free(handle) }
}

/// Owns one `SSL` connection over a `TCPSocket` (and keeps both the socket
/// and the context alive as long as it lives, so they are freed after it).
final class TLSClientSession {
    private let handle: OpaquePointer
    private let socket: TCPSocket
    private let context: TLSClientContext

    init(context: TLSClientContext, socket: TCPSocket, host: String) throws {
        guard let ssl = SSL_new(context.handle) else {
            throw HTTPSClientError(.tls, detail: "SSL_new: \(OpenSSLError.drainErrorQueue())")
        }
        handle = ssl
        self.socket = socket
        self.context = context
        guard SSL_set_fd(ssl, socket.descriptor) == 1 else {
            throw HTTPSClientError(.tls, detail: "SSL_set_fd: \(OpenSSLError.drainErrorQueue())")
        }
        // RFC 6066 §3: SNI carries DNS names only, never an IP literal.
        if !Self.isIPAddress(host) {
            guard gatehouse_ssl_set_tlsext_host_name(ssl, host) == 1 else {
                throw HTTPSClientError(.tls, detail: "SNI: \(OpenSSLError.drainErrorQueue())")
            }
        }
        // RFC 9110 §4.3.4 / RFC 6125: the certificate must name the host we
        // asked for (an IP literal is matched against IP SANs).
        guard SSL_set1_host(ssl, host) == 1 else {
            throw HTTPSClientError(.tls, detail: "SSL_set1_host: \(OpenSSLError.drainErrorQueue())")
        }
        let result = SSL_connect(ssl)
        guard result == 1 else {
            let verify = SSL_get_verify_result(ssl)
            if verify != X509_V_OK {
                _ = OpenSSLError.drainErrorQueue()
                throw HTTPSClientError(.certificate, detail: String(cString: X509_verify_cert_error_string(verify)))
            }
            throw failure(result, operation: "handshake")
        }
    }

    deinit { SSL_free(handle) }

    func write(_ bytes: [UInt8], deadline: MonotonicDeadline) throws {
        var sent = 0
        while sent < bytes.count {
            try socket.limit(to: deadline)
            let result = bytes.withUnsafeBytes { SSL_write(handle, $0.baseAddress.map { $0 + sent }, Int32(bytes.count - sent)) }
            guard result > 0 else { throw failure(result, operation: "write") }
            sent += Int(result)
        }
    }

    /// Bytes read into the front of `buffer`; 0 at the peer's close_notify.
    func read(into buffer: inout [UInt8], deadline: MonotonicDeadline) throws -> Int {
        try socket.limit(to: deadline)
        let capacity = Int32(buffer.count)
        let result = buffer.withUnsafeMutableBytes { SSL_read(handle, $0.baseAddress, capacity) }
        if result > 0 { return Int(result) }
        if SSL_get_error(handle, result) == SSL_ERROR_ZERO_RETURN { return 0 }
        throw failure(result, operation: "read")
    }

    private func failure(_ result: Int32, operation: String) -> HTTPSClientError {
        let code = SSL_get_error(handle, result)
        let savedErrno = errno
        let queue = OpenSSLError.drainErrorQueue()
        if code == SSL_ERROR_WANT_READ || code == SSL_ERROR_WANT_WRITE
            || (code == SSL_ERROR_SYSCALL && (savedErrno == EAGAIN || savedErrno == EWOULDBLOCK)) {
            return HTTPSClientError(.timeout, detail: "\(operation) timed out")
        }
        if code == SSL_ERROR_SYSCALL, queue.isEmpty {
            return HTTPSClientError(.io, detail: "\(operation): \(savedErrno == 0 ? "connection closed" : String(cString: strerror(savedErrno)))")
        }
        return HTTPSClientError(.tls, detail: "\(operation): SSL error \(code) \(queue)")
    }

    private static func isIPAddress(_ host: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
    }
}
