import CPostgreSQL
import Glibc

/// PostgreSQL's binary format for the few types Gatehouse uses (pg_type
/// OIDs: 20 int8, 23 int4, 21 int2, 16 bool, 25 text, 1043 varchar, 19
/// name, 17 bytea). Every value travels with its length, so bytes are
/// bytes: no quoting, no escaping, no NUL termination.
enum PostgreSQLWire {
    static let int8: Oid = 20, int4: Oid = 23, int2: Oid = 21, bool: Oid = 16
    static let text: Oid = 25, varchar: Oid = 1043, name: Oid = 19, bytea: Oid = 17

    /// The parameters as libpq wants them: pointers, lengths, formats (1 =
    /// binary), valid for the duration of `body`.
    static func withParameters<T>(_ values: [PostgreSQLValue],
                                  _ body: (UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?, UnsafePointer<Int32>?) throws -> T) rethrows -> T {
        let encoded = values.map(encode)
        // One buffer for all values, so every pointer stays valid together.
        var storage: [UInt8] = encoded.flatMap { $0 ?? [] }
        if storage.isEmpty { storage = [0] }
        let lengths = encoded.map { Int32($0?.count ?? 0) }
        let formats = [Int32](repeating: 1, count: values.count)
        return try storage.withUnsafeBufferPointer { buffer in
            var offset = 0
            let base = UnsafeRawPointer(buffer.baseAddress!).assumingMemoryBound(to: CChar.self)
            let pointers: [UnsafePointer<CChar>?] = encoded.map { value in
                guard let value else { return nil }
                defer { offset += value.count }
                return base + offset
            }
            return try pointers.withUnsafeBufferPointer { pointerBuffer in
                try lengths.withUnsafeBufferPointer { lengthBuffer in
                    try formats.withUnsafeBufferPointer { formatBuffer in
                        try body(pointerBuffer.baseAddress, lengthBuffer.baseAddress, formatBuffer.baseAddress)
                    }
                }
            }
        }
    }

    static func encode(_ value: PostgreSQLValue) -> [UInt8]? {
        switch value {
        case .integer(let number): withUnsafeBytes(of: number.bigEndian) { Array($0) }
        case .text(let string): Array(string.utf8)
        case .bytes(let bytes): bytes
        case .null: nil
        }
    }

    /// Every row of a binary-format result.
    static func rows(of result: OpaquePointer) throws -> [PostgreSQLRow] {
        let rowCount = gatehouse_PQntuples(result), columnCount = gatehouse_PQnfields(result)
        let types = (0..<columnCount).map { gatehouse_PQftype(result, $0) }
        return try (0..<rowCount).map { row in
            PostgreSQLRow(values: try (0..<columnCount).map { column in
                guard gatehouse_PQgetisnull(result, row, column) == 0 else { return .null }
                let count = Int(gatehouse_PQgetlength(result, row, column))
                let bytes = gatehouse_PQgetvalue(result, row, column).map {
                    Array(UnsafeRawBufferPointer(start: $0, count: count))
                } ?? []
                return try decode(bytes, type: types[Int(column)])
            })
        }
    }

    static func decode(_ bytes: [UInt8], type: Oid) throws -> PostgreSQLValue {
        switch type {
        case int8, int4, int2:
            guard [8, 4, 2].contains(bytes.count) else { throw PostgreSQLError(sqlState: "", message: "bad integer length \(bytes.count)") }
            // Big-endian two's complement, sign-extended from its width.
            var value: Int64 = bytes.first.map { $0 & 0x80 != 0 ? -1 : 0 } ?? 0
            for byte in bytes { value = value << 8 | Int64(byte) }
            return .integer(value)
        case bool:
            return .integer(bytes.first == 1 ? 1 : 0)
        case text, varchar, name:
            return .text(String(decoding: bytes, as: UTF8.self))
        case bytea:
            return .bytes(bytes)
        default:
            throw PostgreSQLError(sqlState: "", message: "column type \(type) is not one Gatehouse reads; cast it in the SQL")
        }
    }

    /// NUL-terminated copies of `strings` for the length of `body`.
    static func withCStrings<T>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> T) -> T {
        let copies = strings.map { strdup($0) }
        defer { copies.forEach { free($0) } }
        let pointers = copies.map { UnsafePointer($0) } + [nil]
        return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
    }
}

extension PostgreSQLValue {
    /// The parameter's declared type; NULL leaves it to the server.
    var typeOID: Oid {
        switch self {
        case .integer: PostgreSQLWire.int8
        case .text: PostgreSQLWire.text
        case .bytes: PostgreSQLWire.bytea
        case .null: 0
        }
    }
}
