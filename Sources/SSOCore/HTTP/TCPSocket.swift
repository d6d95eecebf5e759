#if canImport(Glibc)
import Glibc
#endif

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
