import FoundationEssentials

/// The status line and headers of a response (RFC 9112 §4, §5), parsed as
/// soon as the blank line that ends them has arrived.
struct HTTPResponseHead {
    let status: Int
    let headers: [String: String]
    let bodyOffset: Int
    /// nil when the body runs to the end of the connection.
    let contentLength: Int?

    /// nil while the blank line has not arrived yet. `bodiless`: the request
    /// was a HEAD, whose reply never has content whatever its Content-Length
    /// says (RFC 9110 §9.3.2).
    static func parse(_ bytes: [UInt8], bodiless: Bool = false) throws -> HTTPResponseHead? {
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
        // RFC 9110 §6.4.1: 204 and 304 never have content either.
        if bodiless || status == 204 || status == 304 { contentLength = 0 }
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
