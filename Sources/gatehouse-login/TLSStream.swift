import COpenSSL
#if canImport(Glibc)
import Glibc
#endif

/// Owns one `SSL` connection over a `TCPStream`, and keeps the socket and the
/// context alive as long as it lives, so they are freed after it.
final class TLSStream {
    private let handle: OpaquePointer
    private let tcp: TCPStream
    private let context: TLSContext

    init(context: TLSContext, tcp: TCPStream, host: String) throws {
        guard let ssl = SSL_new(context.handle) else { throw ToolError("TLS: cannot create a connection") }
        handle = ssl
        self.tcp = tcp
        self.context = context
        guard SSL_set_fd(ssl, tcp.descriptor) == 1 else { throw Self.failure("attach the socket") }
        // RFC 6066 §3: SNI carries DNS names only, never an IP literal.
        if !Self.isIPAddress(host), gatehouse_ssl_set_tlsext_host_name(ssl, host) != 1 { throw Self.failure("set SNI") }
        // RFC 9110 §4.3.4: the certificate must name the host we asked for.
        guard SSL_set1_host(ssl, host) == 1 else { throw Self.failure("set the expected host name") }
        guard SSL_connect(ssl) == 1 else {
            let verify = SSL_get_verify_result(ssl)
            if verify != X509_V_OK {
                ERR_clear_error()
                throw ToolError("TLS: the certificate of \(host) is not trusted (\(String(cString: X509_verify_cert_error_string(verify))))"
                                + "; pass the CA with --ca-file")
            }
            throw Self.failure("handshake with \(host)")
        }
    }

    deinit { SSL_free(handle) }

    func write(_ bytes: [UInt8], deadline: Deadline) throws {
        var sent = 0
        while sent < bytes.count {
            tcp.setTimeouts(seconds: try deadline.remaining())
            let result = bytes.withUnsafeBytes { SSL_write(handle, $0.baseAddress.map { $0 + sent }, Int32(bytes.count - sent)) }
            guard result > 0 else { throw Self.failure("write", ssl: handle, result: result) }
            sent += Int(result)
        }
    }

    /// Bytes read into the front of `buffer`; 0 at the peer's close_notify.
    func read(into buffer: inout [UInt8], deadline: Deadline) throws -> Int {
        tcp.setTimeouts(seconds: try deadline.remaining())
        let capacity = Int32(buffer.count)
        let result = buffer.withUnsafeMutableBytes { SSL_read(handle, $0.baseAddress, capacity) }
        if result > 0 { return Int(result) }
        if SSL_get_error(handle, result) == SSL_ERROR_ZERO_RETURN { return 0 }
        throw Self.failure("read", ssl: handle, result: result)
    }

    private static func failure(_ operation: String, ssl: OpaquePointer? = nil, result: Int32 = 0) -> ToolError {
        let savedErrno = errno
        let code = ssl.map { SSL_get_error($0, result) } ?? 0
        let queue = ERR_get_error()
        ERR_clear_error()
        if code == SSL_ERROR_WANT_READ || code == SSL_ERROR_WANT_WRITE
            || (code == SSL_ERROR_SYSCALL && (savedErrno == EAGAIN || savedErrno == EWOULDBLOCK)) {
            return ToolError("TLS \(operation): timed out")
        }
        if code == SSL_ERROR_SYSCALL, queue == 0 {
            return ToolError("TLS \(operation): \(savedErrno == 0 ? "connection closed" : String(cString: strerror(savedErrno)))")
        }
        var text = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(queue, &text, text.count)
        return ToolError("TLS \(operation) failed: \(String(cString: text))")
    }

    private static func isIPAddress(_ host: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
    }
}
