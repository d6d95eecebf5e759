import FoundationEssentials

/// Header fields written so that what a user typed can never become a
/// header of its own: controls are refused before a message exists, text
/// that is not plain ASCII becomes RFC 2047 encoded-words, and long fields
/// are folded.
enum MailHeaderText {
    /// RFC 2047 §2: "each line of a header field that contains one or more
    /// 'encoded-word's is limited to 76 characters"; we hold every line to it.
    static let lineLimit = 76
    /// RFC 2047 §2: "An 'encoded-word' may not be more than 75 characters long".
    static let encodedWordLimit = 75

    /// CR and LF would start a header of their own; NUL, the other C0 and
    /// C1 controls, DEL and the Unicode line and paragraph separators have
    /// no place in a name or a subject either. Refused, never stripped: a
    /// quietly altered header would hide the attempt.
    static func refuseControls(_ text: String, as code: MailMessageError.Code, field: String) throws {
        for scalar in text.unicodeScalars where isControl(scalar) {
            throw MailMessageError(code, detail: "\(field) holds control character U+\(String(scalar.value, radix: 16, uppercase: true))")
        }
    }

    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar.value == 0x2028 || scalar.value == 0x2029
    }

    /// `Name: token token ...` with CRLF, folded (RFC 5322 §2.2.3) before
    /// any token that would take its line past `lineLimit`. A token is
    /// never split, so the caller makes tokens short enough.
    static func field(_ name: String, _ tokens: [String]) -> String {
        var text = name + ":"
        var column = text.utf8.count
        for token in tokens {
            if column + 1 + token.utf8.count > lineLimit && column > name.utf8.count + 1 {
                text += "\r\n"
                column = 0
            }
            text += " " + token
            column += 1 + token.utf8.count
        }
        return text + "\r\n"
    }

    /// Unstructured text (a subject) as tokens for `field`: its words when
    /// it is plain ASCII that folds cleanly, otherwise encoded-words.
    static func unstructuredTokens(_ text: String, headerName: String) -> [String] {
        if text.isEmpty { return [] }
        let words = text.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
        if isPlain(text), words.allSatisfy({ !$0.isEmpty && $0.utf8.count <= lineLimit - headerName.utf8.count - 2 }) {
            return words
        }
        return encodedWords(text, firstRoom: lineLimit - headerName.utf8.count - 2)
    }

    /// A display name as tokens for `field` (RFC 5322 §3.4 `display-name =
    /// phrase`): atoms when it is made of them, a quoted-string when it is
    /// other printable ASCII, otherwise encoded-words (RFC 2047 §5 (3)
    /// allows them in a phrase).
    static func phraseTokens(_ name: String, headerName: String) -> [String] {
        let room = lineLimit - headerName.utf8.count - 2
        let words = name.split(separator: " ", omittingEmptySubsequences: false)
        if isPlain(name), words.allSatisfy({ !$0.isEmpty && $0.utf8.count <= room && $0.utf8.allSatisfy(MailAddress.isAtext) }) {
            return words.map(String.init)
        }
        if isPlain(name), name.utf8.count + 2 <= room {
            var quoted = "\""
            for character in name.unicodeScalars {
                if character == "\"" || character == "\\" { quoted += "\\" }
                quoted.unicodeScalars.append(character)
            }
            let token = quoted + "\""
            if token.utf8.count <= room { return [token] }
        }
        return encodedWords(name, firstRoom: room)
    }

    /// Printable ASCII that no decoder would mistake for an encoded-word.
    private static func isPlain(_ text: String) -> Bool {
        text.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7F } && !text.contains("=?")
    }

    /// RFC 2047 "B" encoded-words in UTF-8, the first at most `firstRoom`
    /// characters long and the others at most 75. Each holds whole
    /// characters (§5: "Each 'encoded-word' MUST represent an integral
    /// number of characters"), split between Unicode scalars.
    static func encodedWords(_ text: String, firstRoom: Int) -> [String] {
        let overhead = "=?UTF-8?B??=".utf8.count
        func encodedLength(_ byteCount: Int) -> Int { overhead + (byteCount + 2) / 3 * 4 }
        func word(_ bytes: [UInt8]) -> String { "=?UTF-8?B?" + Data(bytes).base64EncodedString() + "?=" }
        var words: [String] = []
        var chunk: [UInt8] = []
        for scalar in text.unicodeScalars {
            let bytes = Array(String(scalar).utf8)
            let room = words.isEmpty ? min(firstRoom, encodedWordLimit) : encodedWordLimit
            if !chunk.isEmpty, encodedLength(chunk.count + bytes.count) > room {
                words.append(word(chunk))
                chunk = []
            }
            chunk += bytes
        }
        if !chunk.isEmpty || words.isEmpty { words.append(word(chunk)) }
        return words
    }
}
