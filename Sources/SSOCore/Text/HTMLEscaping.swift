/// HTML text and attribute escaping (OWASP XSS prevention rule #1): every
/// value that reaches a generated page (error messages, links, names) goes
/// through here, so nothing from a request becomes markup.
public enum HTMLEscaping {
    public static func escape(_ text: String) -> String {
        var output = ""
        output.reserveCapacity(text.utf8.count)
        for character in text.unicodeScalars {
            switch character {
            case "&": output += "&amp;"
            case "<": output += "&lt;"
            case ">": output += "&gt;"
            case "\"": output += "&quot;"
            case "'": output += "&#39;"
            default: output.unicodeScalars.append(character)
            }
        }
        return output
    }
}
