import Foundation
import SSOCore

/// What a server answered.
struct HTTPReply {
    let status: Int
    /// Header names in lower case; a repeated header keeps its last value.
    let headers: [String: String]
    let body: [UInt8]

    var isSuccess: Bool { (200...299).contains(status) }

    var text: String { String(decoding: body, as: UTF8.self) }

    func decode<T: Decodable>(_ type: T.Type, what: String) throws -> T {
        do { return try JSON.decoder.decode(type, from: Data(body)) } catch {
            throw ToolError("\(what): HTTP \(status) with a body that is not the expected JSON")
        }
    }

    /// The status line and headers (RFC 9112 §4, §5), parsed once the blank
    /// line that ends them has arrived.
    struct Head {
        let status: Int
        let headers: [String: String]
        let bodyOffset: Int
        let contentLength: Int?

        /// nil while the blank line has not arrived yet.
        static func parse(_ bytes: [UInt8]) throws -> Head? {
            guard let end = headerEnd(bytes) else { return nil }
            let text = String(decoding: bytes[..<end], as: UTF8.self)
            var lines = text.components(separatedBy: "\r\n")
            let statusLine = lines.removeFirst().split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
            guard statusLine.count >= 2, statusLine[0].hasPrefix("HTTP/1."), statusLine[1].utf8.count == 3,
                  let status = Int(statusLine[1]), (100...599).contains(status) else {
                throw ToolError("malformed HTTP status line")
            }
            var headers: [String: String] = [:]
            for line in lines where !line.isEmpty {
                guard let colon = line.firstIndex(of: ":"), !line.hasPrefix(" "), !line.hasPrefix("\t") else {
                    throw ToolError("malformed HTTP header line")
                }
                headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
            // An HTTP/1.0 request is never answered chunked (RFC 9112 §6.1).
            if let coding = headers["transfer-encoding"], coding.lowercased() != "identity" {
                throw ToolError("unexpected transfer-encoding \(coding)")
            }
            var contentLength: Int?
            if let value = headers["content-length"] {
                guard let length = Int(value), length >= 0 else { throw ToolError("malformed content-length") }
                contentLength = length
            }
            // RFC 9110 §6.4.1: these never have a body.
            if status == 204 || status == 304 { contentLength = 0 }
            return Head(status: status, headers: headers, bodyOffset: end + 4, contentLength: contentLength)
        }

        static func headerEnd(_ bytes: [UInt8]) -> Int? {
            guard bytes.count >= 4 else { return nil }
            for index in 0...(bytes.count - 4)
            where bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
                return index
            }
            return nil
        }

        func reply(from bytes: [UInt8]) throws -> HTTPReply {
            var body = Array(bytes[min(bodyOffset, bytes.count)...])
            if let contentLength {
                guard body.count >= contentLength else { throw ToolError("response body truncated") }
                body = Array(body.prefix(contentLength))
            }
            return HTTPReply(status: status, headers: headers, body: body)
        }
    }
}
