import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// One connected TCP socket, closed with this object.
final class TCPStream {
    let descriptor: Int32

    private init(descriptor: Int32) { self.descriptor = descriptor }

    deinit { close(descriptor) }

    /// Tries each address the name resolves to, in resolver order. On Linux a
    /// blocking connect() honours SO_SNDTIMEO, which bounds the handshake.
    static func connect(host: String, port: Int, timeout: Double) throws -> TCPStream {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_protocol = Int32(IPPROTO_TCP)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            throw ToolError("cannot resolve \(host): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(list) }
        var failures: [String] = []
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let entry = cursor {
            cursor = entry.pointee.ai_next
            let fd = socket(entry.pointee.ai_family, entry.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue), entry.pointee.ai_protocol)
            guard fd >= 0 else { failures.append(String(cString: strerror(errno))); continue }
            let stream = TCPStream(descriptor: fd)
            stream.setTimeouts(seconds: timeout)
            if Glibc.connect(fd, entry.pointee.ai_addr, entry.pointee.ai_addrlen) == 0 { return stream }
            failures.append(errno == EINPROGRESS || errno == EAGAIN ? "timed out" : String(cString: strerror(errno)))
        }
        throw ToolError("cannot connect to \(host):\(port): \(failures.joined(separator: "; "))")
    }

    /// Bounds the next reads and writes (and a connect in progress).
    func setTimeouts(seconds: Double) {
        let clamped = max(seconds, 0.001)
        var value = timeval(tv_sec: Int(clamped), tv_usec: Int((clamped - clamped.rounded(.down)) * 1_000_000))
        for option in [SO_RCVTIMEO, SO_SNDTIMEO] {
            _ = setsockopt(descriptor, SOL_SOCKET, option, &value, socklen_t(MemoryLayout<timeval>.size))
        }
    }
}
