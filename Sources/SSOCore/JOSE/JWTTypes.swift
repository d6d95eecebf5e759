/// The `typ` header values a verifier accepts. RFC 8725 §3.11 (explicit
/// typing): "the use of explicit typing ... prevent[s] confusion between
/// different kinds of JWTs", so an access token never passes for an ID
/// token, nor the other way round.
///
/// RFC 7515 §4.1.9: typ values are media types, so compared without regard
/// to ASCII case, and "a recipient using the media type value MUST treat it
/// as if "application/" were prepended to any "typ" value not containing a
/// '/'": where the caller allows it, `at+jwt` and `application/at+jwt` are
/// the same type. Compared on bytes, without building a lowered copy (this
/// runs on every API request).
public struct JWTTypes: Sendable {
    /// The accepted names, ASCII lower case, without "application/".
    let names: [[UInt8]]
    let allowsApplicationPrefix: Bool
    /// Whether a header without `typ` is refused.
    let isRequired: Bool

    static let applicationPrefix = Array("application/".utf8)

    /// `typ` must be present and one of `names`.
    public static func required(_ names: [String], allowingApplicationPrefix: Bool) -> JWTTypes {
        JWTTypes(names: names, allowsApplicationPrefix: allowingApplicationPrefix, isRequired: true)
    }

    /// `typ` may be absent; when present it must be one of `names` (OIDC
    /// Core leaves an ID token's typ optional).
    public static func ifPresent(_ names: [String], allowingApplicationPrefix: Bool) -> JWTTypes {
        JWTTypes(names: names, allowsApplicationPrefix: allowingApplicationPrefix, isRequired: false)
    }

    init(names: [String], allowsApplicationPrefix: Bool, isRequired: Bool) {
        self.names = names.map { Array($0.asciiLowercased().utf8) }
        self.allowsApplicationPrefix = allowsApplicationPrefix
        self.isRequired = isRequired
    }

    public func accepts(_ typ: String?) -> Bool {
        guard let typ else { return !isRequired }
        var bytes = Substring(typ).utf8
        if allowsApplicationPrefix, Self.hasPrefixIgnoringASCIICase(bytes, Self.applicationPrefix) {
            bytes = bytes.dropFirst(Self.applicationPrefix.count)
        }
        return names.contains { name in bytes.count == name.count && Self.hasPrefixIgnoringASCIICase(bytes, name) }
    }

    /// Whether `bytes` starts with `lowered` (ASCII lower case), ASCII
    /// upper-case letters in `bytes` counting as lower case.
    static func hasPrefixIgnoringASCIICase(_ bytes: Substring.UTF8View, _ lowered: [UInt8]) -> Bool {
        guard bytes.count >= lowered.count else { return false }
        return zip(bytes, lowered).allSatisfy { byte, expected in
            ((0x41...0x5A).contains(byte) ? byte | 0x20 : byte) == expected
        }
    }
}
