/// A value bound to or read from PostgreSQL. Booleans are stored as
/// integers (0/1) by Gatehouse's schema, as in SQLite, so the issuer's
/// records read the same from either backend.
public enum PostgreSQLValue: Equatable, Sendable {
    case integer(Int64)
    case text(String)
    case bytes([UInt8])
    case null

    public var int: Int64? { if case .integer(let value) = self { value } else { nil } }
    public var string: String? { if case .text(let value) = self { value } else { nil } }
    public var byteArray: [UInt8]? { if case .bytes(let value) = self { value } else { nil } }
    public var isNull: Bool { self == .null }
}

public extension PostgreSQLValue {
    init(_ value: String?) { self = value.map { .text($0) } ?? .null }
    init(_ value: Int) { self = .integer(Int64(value)) }
    init(_ value: Int64?) { self = value.map { .integer($0) } ?? .null }
    init(_ value: Bool) { self = .integer(value ? 1 : 0) }
    init(_ value: [UInt8]?) { self = value.map { .bytes($0) } ?? .null }
}

/// One result row, read by column index.
public struct PostgreSQLRow: Sendable {
    public let values: [PostgreSQLValue]
    public init(values: [PostgreSQLValue]) { self.values = values }
    public subscript(_ index: Int) -> PostgreSQLValue { values[index] }
    public func string(_ index: Int) -> String { values[index].string ?? "" }
    public func optionalString(_ index: Int) -> String? { values[index].string }
    public func int(_ index: Int) -> Int64 { values[index].int ?? 0 }
    public func optionalInt(_ index: Int) -> Int64? { values[index].int }
    public func bytes(_ index: Int) -> [UInt8] { values[index].byteArray ?? [] }
    public func optionalBytes(_ index: Int) -> [UInt8]? { values[index].byteArray }
}
