import Foundation
@testable import SSOCore

/// A message read back the way a mail client would: unfolded headers with
/// encoded-words decoded, and the parts of the multipart body with their
/// quoted-printable undone. Independent of the code under test.
struct ParsedMail {
    /// Raw (unfolded, not decoded) header values by lower-cased name.
    var headers: [String: String] = [:]
    var headerOrder: [String] = []
    var parts: [(headers: [String: String], body: [UInt8])] = []

    init(_ bytes: [UInt8]) throws {
        let text = String(decoding: bytes, as: UTF8.self)
        guard let split = text.range(of: "\r\n\r\n") else { throw ParseError("no blank line after the headers") }
        (headers, headerOrder) = try Self.headerFields(String(text[..<split.lowerBound]))
        guard let contentType = headers["content-type"], let boundary = Self.parameter("boundary", of: contentType) else {
            throw ParseError("no boundary")
        }
        let body = String(text[split.upperBound...])
        let delimiter = "\r\n--" + boundary
        // The first delimiter may start the body (no preamble).
        let sections = ("\r\n" + body).components(separatedBy: delimiter)
        guard sections.count >= 3, sections.last!.hasPrefix("--") else { throw ParseError("no closing delimiter") }
        for section in sections.dropFirst().dropLast() {
            guard section.hasPrefix("\r\n"), let end = section.range(of: "\r\n\r\n") else { throw ParseError("bad part") }
            // Sliced as UTF-8: "\r\n" is one Character, so Character offsets would skip a byte too many.
            let headerBlock = String(section[..<end.lowerBound].utf8.dropFirst(2))!
            let (partHeaders, _) = try Self.headerFields(headerBlock)
            let encoded = String(section[end.upperBound...])
            guard partHeaders["content-transfer-encoding"]?.lowercased() == "quoted-printable" else { throw ParseError("not QP") }
            parts.append((partHeaders, try Self.decodeQuotedPrintable(encoded)))
        }
    }

    /// A header's value with RFC 2047 encoded-words decoded.
    func decoded(_ name: String) throws -> String? {
        try headers[name.lowercased()].map(Self.decodeEncodedWords)
    }

    static func headerFields(_ block: String) throws -> ([String: String], [String]) {
        var fields: [String: String] = [:], order: [String] = []
        // RFC 5322 §2.2.3: unfolding removes each CRLF before white space.
        for line in block.replacingOccurrences(of: "\r\n ", with: " ").components(separatedBy: "\r\n") {
            guard let colon = line.firstIndex(of: ":") else { throw ParseError("header line without colon") }
            let name = line[..<colon].lowercased()
            fields[name] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            order.append(String(line[..<colon]))
        }
        return (fields, order)
    }

    static func parameter(_ name: String, of value: String) -> String? {
        guard let range = value.range(of: name + "=\"") else { return nil }
        let rest = value[range.upperBound...]
        return rest.firstIndex(of: "\"").map { String(rest[..<$0]) }
    }

    static func decodeQuotedPrintable(_ text: String) throws -> [UInt8] {
        var output: [UInt8] = []
        let bytes = Array(text.utf8)
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "=") {
                if index + 2 < bytes.count, bytes[index + 1] == 13, bytes[index + 2] == 10 { index += 3; continue }
                guard index + 2 < bytes.count, let value = UInt8(String(decoding: bytes[(index + 1)...(index + 2)], as: UTF8.self), radix: 16) else {
                    throw ParseError("bad = escape")
                }
                output.append(value)
                index += 3
            } else {
                output.append(bytes[index])
                index += 1
            }
        }
        return output
    }

    /// `=?UTF-8?B?...?=` words; white space between adjacent words dropped (RFC 2047 §6.2).
    static func decodeEncodedWords(_ value: String) throws -> String {
        let pattern = try NSRegularExpression(pattern: "=\\?UTF-8\\?B\\?([A-Za-z0-9+/=]*)\\?=(\\s+(?==\\?))?")
        var result = "", last = value.startIndex
        for match in pattern.matches(in: value, range: NSRange(value.startIndex..., in: value)) {
            let whole = Range(match.range, in: value)!, payload = Range(match.range(at: 1), in: value)!
            result += value[last..<whole.lowerBound]
            guard let data = Data(base64Encoded: String(value[payload])) else { throw ParseError("bad base64") }
            result += String(decoding: data, as: UTF8.self)
            last = whole.upperBound
        }
        return result + value[last...]
    }
}

struct ParseError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The lines of a serialised message; throws on a bare CR or LF.
func crlfLines(_ bytes: [UInt8]) throws -> [String] {
    for (index, byte) in bytes.enumerated() {
        if byte == 13, !(index + 1 < bytes.count && bytes[index + 1] == 10) { throw ParseError("bare CR at \(index)") }
        if byte == 10, !(index > 0 && bytes[index - 1] == 13) { throw ParseError("bare LF at \(index)") }
    }
    return String(decoding: bytes, as: UTF8.self).components(separatedBy: "\r\n")
}
