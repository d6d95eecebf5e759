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

    mutating func string(_ key: StaticString, _ value: String) {
        self.key(key)
        appendQuoted(value)
    }

    mutating func integer(_ key: StaticString, _ value: Int) {
        self.key(key)
        bytes.append(contentsOf: String(value).utf8)
    }

    /// A number already in JSON's number syntax.
    mutating func number(_ key: StaticString, _ text: String) {
        self.key(key)
        bytes.append(contentsOf: text.utf8)
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

    private mutating func appendQuoted(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(UInt8(ascii: "\\")); bytes.append(byte)
            case UInt8(ascii: "\\"): bytes.append(UInt8(ascii: "\\")); bytes.append(byte)
            case 0x0A: bytes.append(UInt8(ascii: "\\")); bytes.append(UInt8(ascii: "n"))
            case 0x0D: bytes.append(UInt8(ascii: "\\")); bytes.append(UInt8(ascii: "r"))
            case 0x09: bytes.append(UInt8(ascii: "\\")); bytes.append(UInt8(ascii: "t"))
            case 0x00..<0x20:
                let hex: [UInt8] = Array("0123456789abcdef".utf8)
                bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                                          hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
