import SSOCore

/// What libcurl hands back while a transfer runs: the header lines and the
/// body, within a byte budget for both together. Lives as long as the
/// `CurlTransfer` that registered it.
final class ResponseCollector {
    let limit: Int
    private(set) var headers: [String: String] = [:]
    private(set) var body: [UInt8] = []
    private(set) var received = 0
    /// Set when the budget ran out: libcurl then reports a write error,
    /// which this turns into `responseTooLarge`.
    private(set) var overLimit = false

    init(limit: Int) { self.limit = limit }

    /// One header line, CRLF included. A status line starts a new header
    /// section (an interim 1xx reply comes before the final one).
    func header(_ line: UnsafeBufferPointer<UInt8>) -> Bool {
        guard take(line.count) else { return false }
        let text = String(decoding: line, as: UTF8.self).trimmingASCIIWhitespace(newlines: true)
        if text.hasPrefix("HTTP/") {
            headers = [:]
        } else if let colon = text.firstIndex(of: ":"), !line.isEmpty, line[0] != 32, line[0] != 9 {
            let name = text[..<colon].lowercased()
            headers[name] = text[text.index(after: colon)...].trimmingASCIIWhitespace()
        }
        return true
    }

    func bodyBytes(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard take(bytes.count) else { return false }
        body.append(contentsOf: bytes)
        return true
    }

    private func take(_ count: Int) -> Bool {
        received += count
        if received > limit { overLimit = true }
        return !overLimit
    }
}

/// CURLOPT_WRITEFUNCTION and CURLOPT_HEADERFUNCTION: C functions, so no
/// captures; the collector comes back through CURLOPT_WRITEDATA and
/// CURLOPT_HEADERDATA. Returning less than given makes libcurl stop.
let collectBody: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = {
    collect($0, $1 * $2, $3, ResponseCollector.bodyBytes)
}

let collectHeader: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = {
    collect($0, $1 * $2, $3, ResponseCollector.header)
}

private func collect(_ data: UnsafeMutablePointer<CChar>?, _ length: Int, _ user: UnsafeMutableRawPointer?,
                     _ part: (ResponseCollector) -> (UnsafeBufferPointer<UInt8>) -> Bool) -> Int {
    guard let user else { return 0 }
    guard length > 0, let data else { return length }
    let bytes = UnsafeBufferPointer(start: UnsafeRawPointer(data).assumingMemoryBound(to: UInt8.self), count: length)
    return part(Unmanaged<ResponseCollector>.fromOpaque(user).takeUnretainedValue())(bytes) ? length : 0
}
