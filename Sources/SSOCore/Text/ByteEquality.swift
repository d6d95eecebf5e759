/// Identifiers are compared as bytes.
///
/// Swift's `==` on strings is Unicode canonical equivalence, not byte
/// equality: "\u{212A}" (KELVIN SIGN) == "K" and "\u{037E}" (GREEK QUESTION
/// MARK) == ";". A client id, redirect URI, scope or issuer that compares
/// equal but is spelled differently is a different identifier to SQLite, to
/// a browser and to every other implementation, so protocol checks use these.
extension StringProtocol {
    @inlinable
    public func bytesEqual<Other: StringProtocol>(_ other: Other) -> Bool {
        utf8.elementsEqual(other.utf8)
    }
}

extension Sequence where Element: StringProtocol {
    /// Whether some element has exactly the bytes of `value`.
    @inlinable
    public func containsBytes<Other: StringProtocol>(_ value: Other) -> Bool {
        contains { $0.bytesEqual(value) }
    }
}

extension StringProtocol {
    /// ASCII upper-case letters lowered, every other byte kept: the case
    /// folding URI schemes and hosts get (RFC 3986 §6.2.2.1), where
    /// `lowercased()` goes further ("\u{212A}" KELVIN SIGN becomes "k").
    public func asciiLowercased() -> String {
        String(decoding: utf8.map { (0x41...0x5A).contains($0) ? $0 | 0x20 : $0 }, as: UTF8.self)
    }
}
