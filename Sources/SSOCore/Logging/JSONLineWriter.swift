/// One JSON object on one line, written straight into bytes.
///
/// The request log writes one such line per request, and Foundation's
/// JSONEncoder (boxing every value, sorting keys, a fresh buffer) cost more
/// instructions than the rest of a cached API call (docs/PERFORMANCE.md).
/// Strings are escaped as RFC 8259 §7 requires: "All Unicode characters may
/// be placed within the quotation marks, except for the characters that
/// MUST be escaped: quotation mark, reverse solidus, and the control
/// characters (U+0000 through U+001F)."
struct JSONLineWriter {
    private(set) var bytes: [UInt8] = []
    private var first = true

    init(capacity: Int = 256) {
        bytes.reserveCapacity(capacity)
        bytes.append(UInt8(ascii: "{"))
    }

    mutating func string(_ key: StaticString, _ value: String, maximumBytes: Int = .max) {
        self.key(key)
        appendQuoted(value, maximumBytes: maximumBytes)
    }

    /// Milliseconds rounded to the microsecond, as JSON's number syntax
    /// ("1.235", "0.5", "3.0"): digit by digit, without a Double's description.
    mutating func milliseconds(_ key: StaticString, _ value: Double) {
        self.key(key)
        let microseconds = Int((max(0, value) * 1000).rounded())
        bytes.append(contentsOf: String(microseconds / 1000).utf8)
        bytes.append(UInt8(ascii: "."))
        var fraction = microseconds % 1000
        var divisor = 100
        repeat {
            bytes.append(UInt8(ascii: "0") + UInt8(fraction / divisor))
            fraction %= divisor
            divisor /= 10
        } while fraction > 0 && divisor > 0
    }

    mutating func integer(_ key: StaticString, _ value: Int) {
        self.key(key)
        bytes.append(contentsOf: String(value).utf8)
    }

    /// The value as a string written by `write` (for text built from digits
    /// without a String on the way).
    mutating func raw(_ key: StaticString, _ write: (inout [UInt8]) -> Void) {
        self.key(key)
        bytes.append(UInt8(ascii: "\""))
        write(&bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    /// The line: the object closed, and a newline.
    mutating func finish() -> [UInt8] {
        bytes.append(UInt8(ascii: "}"))
        bytes.append(UInt8(ascii: "\n"))
        return bytes
    }

    private mutating func key(_ key: StaticString) {
        if !first { bytes.append(UInt8(ascii: ",")) }
        first = false
        bytes.append(UInt8(ascii: "\""))
        key.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
    }

    /// The value between quotes, at most `maximumBytes` of its UTF-8 (cut
    /// before a whole scalar, so the line stays valid UTF-8). Runs that need
    /// no escape are copied in one piece: byte by byte, the copy was the
    /// largest part of writing a line.
    private mutating func appendQuoted(_ value: String, maximumBytes: Int) {
        bytes.append(UInt8(ascii: "\""))
        var value = value
        value.withUTF8 { utf8 in
            var end = min(utf8.count, maximumBytes)
            // A UTF-8 continuation byte (10xxxxxx) at the cut belongs to the scalar before it.
            while end < utf8.count, end > 0, utf8[end] & 0xC0 == 0x80 { end -= 1 }
            var runStart = 0
            for index in 0..<end {
                let byte = utf8[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<index]))
                runStart = index + 1
                appendEscaped(byte)
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<end]))
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private mutating func appendEscaped(_ byte: UInt8) {
        switch byte {
        case 0x0A: bytes.append(UInt8(ascii: "\\")); bytes.append(UInt8(ascii: "n"))
        case 0x0D: bytes.append(UInt8(ascii: "\\")); bytes.append(UInt8(ascii: "r"))
        case 0x09: bytes.append(UInt8(ascii: "\\")); bytes.append(UInt8(ascii: "t"))
        case 0x00..<0x20:
            let hex: [UInt8] = Array("0123456789abcdef".utf8)
            bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                                      hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]])
        default: bytes.append(UInt8(ascii: "\\")); bytes.append(byte)
        }
    }
}
