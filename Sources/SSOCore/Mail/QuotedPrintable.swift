/// Quoted-printable (RFC 2045 §6.7) for the text parts of a message.
enum QuotedPrintable {
    /// Rule (5): "The Quoted-Printable encoding REQUIRES that encoded lines
    /// be no more than 76 characters long"; 75 plus the soft break's "=".
    static let softLimit = 75

    /// Line breaks of any kind (CRLF, LF, CR) become CRLF hard breaks
    /// (rule (4)); everything else is encoded byte by byte.
    ///
    /// A line that starts with "." is written "=2E...": SMTP (RFC 5321
    /// §4.5.2) would otherwise need it doubled. libcurl does that
    /// dot-stuffing itself for SMTP uploads (lib/smtp.c escapes CRLF "."
    /// to CRLF ".." and appends the final CRLF "." CRLF), so this is not
    /// what keeps SMTP safe; it keeps the encoded text free of lines any
    /// transport, or a file read back as mail, could take for the end of
    /// the data.
    static func encode(_ text: String) -> [UInt8] {
        var output: [UInt8] = []
        let lines = normalisedLines(Array(text.utf8))
        for (index, line) in lines.enumerated() {
            encodeLine(line, into: &output)
            if index < lines.count - 1 { output += [13, 10] }
        }
        return output
    }

    /// The text split at CRLF, LF or a lone CR.
    static func normalisedLines(_ bytes: [UInt8]) -> [ArraySlice<UInt8>] {
        var lines: [ArraySlice<UInt8>] = []
        var start = 0, index = 0
        while index < bytes.count {
            if bytes[index] == 13 || bytes[index] == 10 {
                lines.append(bytes[start..<index])
                index += bytes[index] == 13 && index + 1 < bytes.count && bytes[index + 1] == 10 ? 2 : 1
                start = index
            } else {
                index += 1
            }
        }
        lines.append(bytes[start..<bytes.count])
        return lines
    }

    private static func encodeLine(_ line: ArraySlice<UInt8>, into output: inout [UInt8]) {
        var column = 0
        for index in line.indices {
            let byte = line[index]
            let isLast = index == line.index(before: line.endIndex)
            var token = self.token(byte, atLineStart: column == 0, isLast: isLast)
            // The last token may fill the line to 76: no soft break follows it.
            if column + token.count > (isLast ? softLimit + 1 : softLimit) {
                output += [UInt8(ascii: "="), 13, 10]
                column = 0
                token = self.token(byte, atLineStart: true, isLast: isLast)
            }
            output += token
            column += token.count
        }
    }

    private static func token(_ byte: UInt8, atLineStart: Bool, isLast: Bool) -> [UInt8] {
        switch byte {
        // Rule (3): white space at the end of an encoded line is encoded.
        case 0x20, 0x09: return isLast ? hex(byte) : [byte]
        case UInt8(ascii: ".") where atLineStart: return hex(byte)
        // Rule (2): printable ASCII except "=" stands for itself.
        case 33...60, 62...126: return [byte]
        default: return hex(byte)
        }
    }

    private static let digits = Array("0123456789ABCDEF".utf8)
    private static func hex(_ byte: UInt8) -> [UInt8] {
        [UInt8(ascii: "="), digits[Int(byte >> 4)], digits[Int(byte & 15)]]
    }
}
