import SSOCore

/// A value bound to or read from SQLite.
public enum SQLiteValue: Equatable, Sendable {
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])
    case null

    public var int: Int64? { if case .integer(let value) = self { value } else { nil } }
    public var string: String? { if case .text(let value) = self { value } else { nil } }
    public var bytes: [UInt8]? { if case .blob(let value) = self { value } else { nil } }
    public var isNull: Bool { self == .null }
}

extension SQLiteValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByNilLiteral {
    public init(stringLiteral value: String) { self = .text(value) }
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(nilLiteral: ()) { self = .null }
}

public extension SQLiteValue {
    init(_ value: String?) { self = value.map { .text($0) } ?? .null }
    init(_ value: Int) { self = .integer(Int64(value)) }
    init(_ value: Int64) { self = .integer(value) }
    init(_ value: Bool) { self = .integer(value ? 1 : 0) }
    init(_ value: [UInt8]) { self = .blob(value) }
}

/// One result row, read by column index.
public struct SQLiteRow: Sendable {
    public let values: [SQLiteValue]
    public subscript(_ index: Int) -> SQLiteValue { values[index] }
    public func string(_ index: Int) -> String { values[index].string ?? "" }
    public func optionalString(_ index: Int) -> String? { values[index].string }
    public func int(_ index: Int) -> Int64 { values[index].int ?? 0 }
    public func optionalInt(_ index: Int) -> Int64? { values[index].int }
    public func bytes(_ index: Int) -> [UInt8] { values[index].bytes ?? [] }
    public func optionalBytes(_ index: Int) -> [UInt8]? { values[index].bytes }
}

public struct SQLiteError: Error, CustomStringConvertible {
    public let code: Int32
    public let message: String
    public init(code: Int32, message: String) { self.code = code; self.message = message }
    public var description: String { "SQLite error \(code): \(message)" }

    /// SQLITE_BUSY / SQLITE_LOCKED after the busy timeout: another process
    /// holds the write lock. Temporary, so the client is told to retry.
    public var isBusy: Bool { code & 0xff == 5 || code & 0xff == 6 }
    /// SQLITE_FULL, SQLITE_READONLY, SQLITE_IOERR: the disk is full, or the
    /// file or its filesystem refuses writes. Nothing was written (the
    /// transaction rolled back); it clears when the operator frees space or
    /// restores write access, so this too is a retry-later condition.
    public var isStorageFault: Bool { [13, 8, 10].contains(code & 0xff) }
    /// SQLITE_CONSTRAINT: a unique key or check refused the row.
    public var isConstraint: Bool { code & 0xff == 19 }
}

extension SQLiteError: HTTPResponseError {
    /// Busy and storage faults become 503 with Retry-After (the client may
    /// retry; RFC 9110 §15.6.4); anything else is a server fault, a logged 500
    /// with no detail on the wire.
    public var response: Response {
        if isBusy { return .plainError(503, "temporarily_unavailable", headers: [("Retry-After", "1")]) }
        if isStorageFault { return .plainError(503, "temporarily_unavailable", headers: [("Retry-After", "5")]) }
        return .plainError(500, "server_error")
    }
    public var logDetail: String { description }
}
