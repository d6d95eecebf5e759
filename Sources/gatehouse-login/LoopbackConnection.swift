import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// One connection the browser opened to the loopback listener: one request
/// read, one answer written, closed with this object.
final class LoopbackConnection {
    private let descriptor: Int32
    static let maximumRequestBytes = 16 * 1024

    init(descriptor: Int32) { self.descriptor = descriptor }

    deinit { close(descriptor) }

    /// The request line of the browser's request, or nil when the browser
    /// sent nothing usable in time (a speculative pre-connection, say).
    func readRequest(timeout: Double = 5) -> BrowserRequest? {
        var value = timeval(tv_sec: Int(timeout), tv_usec: 0)
        _ = setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while received.count < Self.maximumRequestBytes {
            let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            received.append(contentsOf: chunk.prefix(count))
            if received.firstRange(of: [13, 10, 13, 10]) != nil { break }
        }
        guard let lineEnd = received.firstIndex(of: 13) ?? received.firstIndex(of: 10) else { return nil }
        // RFC 9112 §3: request-line = method SP request-target SP HTTP-version
        let parts = String(decoding: received[..<lineEnd], as: UTF8.self).split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[2].hasPrefix("HTTP/1."), parts[1].hasPrefix("/") else { return nil }
        let target = parts[1]
        let question = target.firstIndex(of: "?")
        return BrowserRequest(method: String(parts[0]), path: String(target[..<(question ?? target.endIndex)]),
                              query: question.map { String(target[target.index(after: $0)...]) } ?? "")
    }

    /// A complete HTML answer; the connection is closed afterwards.
    func respond(status: Int, reason: String, html: String, extraHeaders: [String] = []) {
        let body = Array(html.utf8)
        let head = (["HTTP/1.1 \(status) \(reason)", "Content-Type: text/html; charset=utf-8", "Content-Length: \(body.count)",
                     "Cache-Control: no-store", "Referrer-Policy: no-referrer",
                     "Content-Security-Policy: default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
                     "X-Content-Type-Options: nosniff", "Connection: close"] + extraHeaders).joined(separator: "\r\n") + "\r\n\r\n"
        var bytes = Array(head.utf8) + body
        var sent = 0
        while sent < bytes.count {
            let count = bytes.withUnsafeMutableBytes { send(descriptor, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL)) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return }  // the browser went away; nothing to tell it
            sent += count
        }
        shutdown(descriptor, Int32(SHUT_WR))
    }
}
