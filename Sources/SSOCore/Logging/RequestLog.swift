import FoundationEssentials
import Glibc

/// One JSON line per request on standard error: time, endpoint, method,
/// path, status, duration, request id. Only the path is logged, never the
/// query, body, cookies or headers: those carry codes, tokens and passwords.
public enum RequestLog {
    struct RequestLine: Encodable {
        let time: String
        let endpoint: String
        let method: String
        let path: String
        let status: Int
        let duration_ms: Double
        let request_id: String
        let detail: String?
    }

    struct EventLine: Encodable {
        let time: String
        let endpoint: String
        let event: String
    }

    public static func request(endpoint: String, request: Request, status: Int, milliseconds: Double, detail: String?) {
        let line = RequestLine(time: timestamp(), endpoint: endpoint, method: String(request.method.prefix(16)),
                               path: String(request.path.prefix(256)), status: status,
                               duration_ms: (milliseconds * 1000).rounded() / 1000, request_id: String(request.requestID.prefix(64)),
                               detail: detail.map { String($0.prefix(512)) })
        write(line)
    }

    public static func event(endpoint: String, message: String) {
        write(EventLine(time: timestamp(), endpoint: endpoint, event: message))
    }

    private static func write<Line: Encodable>(_ line: Line) {
        guard var bytes = try? JSON.encode(line) else { return }
        bytes.append(UInt8(ascii: "\n"))
        bytes.withUnsafeBytes { _ = Glibc.write(2, $0.baseAddress, $0.count) }
    }

    /// RFC 3339 UTC with milliseconds, without a formatter allocation per line.
    static func timestamp(now: timespec = currentTime()) -> String {
        var seconds = now.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func pad(_ value: Int32, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2)).\(pad(Int32(now.tv_nsec / 1_000_000), 3))Z"
    }

    static func currentTime() -> timespec {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return now
    }
}
