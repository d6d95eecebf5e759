/// RFC 7519 §4.1.3: "aud" is an array of strings, or one string.
public struct AudienceClaim: Codable, Equatable, Sendable {
    public let values: [String]

    public init(_ values: [String]) { self.values = values }

    public init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let single = try? container.decode(String.self) {
            values = [single]
        } else {
            values = try container.decode([String].self)
        }
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(values)
    }
}
