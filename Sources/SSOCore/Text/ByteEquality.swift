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
