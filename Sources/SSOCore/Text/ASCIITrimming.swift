/// Trimming without Foundation's `trimmingCharacters(in:)`, which lives in
/// the Foundation module that pulls ICU into every responder (about 6 MB of
/// resident memory each). What Gatehouse trims is protocol text: HTTP
/// optional whitespace (RFC 9110 §5.6.3: `OWS = *( SP / HTAB )`), config
/// lines and key files, so ASCII whitespace is the right set anyway.
extension StringProtocol {
    /// Without leading and trailing spaces and tabs (and, with
    /// `newlines: true`, CR and LF).
    public func trimmingASCIIWhitespace(newlines: Bool = false) -> String {
        func isBlank(_ byte: UInt8) -> Bool {
            byte == 0x20 || byte == 0x09 || (newlines && (byte == 0x0A || byte == 0x0D))
        }
        let bytes = Array(utf8)
        guard let first = bytes.firstIndex(where: { !isBlank($0) }), let last = bytes.lastIndex(where: { !isBlank($0) }) else {
            return ""
        }
        return String(decoding: bytes[first...last], as: UTF8.self)
    }
}
