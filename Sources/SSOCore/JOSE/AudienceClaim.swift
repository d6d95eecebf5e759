/// RFC 7519 §4.1.3: "aud" is an array of strings, or one string.
public struct AudienceClaim: Codable, Equatable, Sendable {
    public let values: [String]
    /// The claim was one string, not an array (FAPI 2.0 §5.3.2.1 asks for
    /// the issuer "as a string" in client assertions).
    public let isSingleString: Bool

    public init(_ values: [String]) {
        self.values = values
        isSingleString = false
    }

    public init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let single = try? container.decode(String.self) {
            values = [single]
            isSingleString = true
        } else {
            values = try container.decode([String].self)
            isSingleString = false
        }
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(values)
    }
}
