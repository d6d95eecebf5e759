import COpenSSL
#if canImport(Glibc)
import Glibc
#endif

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
