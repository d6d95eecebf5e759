import FoundationEssentials
import Glibc

/// One JSON line per request on standard error: time, endpoint, method,
/// path, client address, status, duration, request id. Only the path is
/// logged, never the query, body, cookies or headers: those carry codes,
/// tokens and passwords. nginx writes no access line of its own for a
/// request a responder answered, so this line is that request's record.
public enum RequestLog {
    struct EventLine: Encodable {
        let time: String
        let endpoint: String
        let event: String
    }

    /// Keys in the order JSONEncoder's `.sortedKeys` gave them (the log's
    /// readers see the same lines as before).
    public static func request(endpoint: String, request: Request, status: Int, milliseconds: Double, detail: String?) {
        var line = JSONLineWriter()
        // Each value is cut at a byte length (on a scalar boundary) so no
        // request can write a line of unbounded size.
        if let detail { line.string("detail", detail, maximumBytes: 512) }
        line.milliseconds("duration_ms", milliseconds)
        line.string("endpoint", endpoint)
        line.string("method", request.method, maximumBytes: 16)
        line.string("path", request.path, maximumBytes: 256)
        line.string("remote_addr", request.remoteAddress, maximumBytes: 64)
        line.string("request_id", request.requestID, maximumBytes: 64)
        line.integer("status", status)
        line.raw("time") { appendTimestamp(to: &$0, now: currentTime()) }
        pending.append(contentsOf: line.finish())
        if pending.count >= flushThreshold { flush() }
    }

    /// Request lines not yet written. A responder under load writes them a
    /// few kilobytes at a time instead of one write(2) per request (that
    /// write was a few percent of an API call); the accept loop calls
    /// `flush()` whenever no connection is waiting, so a line is held only
    /// while the next request is already queued. The responders are
    /// single-threaded: only the accept loop's thread touches it.
    nonisolated(unsafe) private static var pending: [UInt8] = []
    static let flushThreshold = 4096

    public static var hasPending: Bool { !pending.isEmpty }

    /// Writes the held lines, whole, in order.
    public static func flush() {
        guard !pending.isEmpty else { return }
        writeAll(pending)
        pending.removeAll(keepingCapacity: true)
    }

    private static func writeAll(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(2, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else { return }
                offset += written
            }
        }
    }

    public static func event(endpoint: String, message: String) {
        write(EventLine(time: timestamp(), endpoint: endpoint, event: message))
    }

    private static func write<Line: Encodable>(_ line: Line) {
        guard var bytes = try? JSON.encode(line) else { return }
        bytes.append(UInt8(ascii: "\n"))
        flush()  // after the request lines before it, in order
        writeAll(bytes)
    }

    /// RFC 3339 UTC with milliseconds, without a formatter allocation per line.
    static func timestamp(now: timespec = currentTime()) -> String {
        var bytes: [UInt8] = []
        appendTimestamp(to: &bytes, now: now)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// "2023-11-14T22:13:20.005Z", digit by digit.
    static func appendTimestamp(to bytes: inout [UInt8], now: timespec) {
        var seconds = now.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func digits(_ value: Int, _ width: Int) {
            var divisor = 1
            for _ in 1..<width { divisor *= 10 }
            var rest = value
            while divisor > 0 {
                bytes.append(UInt8(ascii: "0") + UInt8(rest / divisor % 10))
                rest %= divisor
                divisor /= 10
            }
        }
        digits(Int(parts.tm_year) + 1900, 4); bytes.append(UInt8(ascii: "-"))
        digits(Int(parts.tm_mon) + 1, 2); bytes.append(UInt8(ascii: "-"))
        digits(Int(parts.tm_mday), 2); bytes.append(UInt8(ascii: "T"))
        digits(Int(parts.tm_hour), 2); bytes.append(UInt8(ascii: ":"))
        digits(Int(parts.tm_min), 2); bytes.append(UInt8(ascii: ":"))
        digits(Int(parts.tm_sec), 2); bytes.append(UInt8(ascii: "."))
        digits(Int(now.tv_nsec / 1_000_000), 3); bytes.append(UInt8(ascii: "Z"))
    }

    static func currentTime() -> timespec {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return now
    }
}
