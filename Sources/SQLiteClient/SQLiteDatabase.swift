import CSQLite
import SSOCore

/// One SQLite connection, opened in WAL mode with a busy timeout, with a
/// cache of prepared statements so each SQL text is compiled once per process.
public final class SQLiteDatabase {
    private let handle: OpaquePointer
    private var statements: [String: SQLiteStatement] = [:]
    public let path: String

    public init(path: String, busyTimeoutMilliseconds: Int32 = 2000, readOnly: Bool = false) throws {
        var opened: OpaquePointer?
        let flags = (readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) | SQLITE_OPEN_NOMUTEX
        let status = sqlite3_open_v2(path, &opened, flags, nil)
        guard status == SQLITE_OK, let connection = opened else {
            let message = opened.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            sqlite3_close_v2(opened)
            throw SQLiteError(code: status, message: message)
        }
        handle = connection
        self.path = path
        sqlite3_extended_result_codes(handle, 1)
        gatehouse_sqlite_set_busy_timeout(handle, busyTimeoutMilliseconds)
        if !readOnly { try execute("PRAGMA journal_mode = WAL") }
        try execute("PRAGMA foreign_keys = ON")
        try execute("PRAGMA synchronous = NORMAL")
    }

    deinit {
        statements.removeAll()
        sqlite3_close_v2(handle)
    }

    func error(_ status: Int32) -> SQLiteError {
        SQLiteError(code: status, message: String(cString: sqlite3_errmsg(handle)))
    }

    /// Runs statements that take no parameters and return nothing (DDL, pragmas).
    public func executeScript(_ sql: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        let status = sqlite3_exec(handle, sql, nil, nil, &message)
        if status != SQLITE_OK {
            let text = message.map { String(cString: $0) } ?? ""
            sqlite3_free(message)
            throw SQLiteError(code: status, message: text)
        }
    }

    private func statement(_ sql: String) throws -> SQLiteStatement {
        if let cached = statements[sql] { return cached }
        let prepared = try SQLiteStatement(database: handle, sql: sql, onError: error)
        statements[sql] = prepared
        return prepared
    }

    /// Runs one statement and returns every row it yields.
    @discardableResult
    public func query(_ sql: String, _ values: [SQLiteValue] = []) throws -> [SQLiteRow] {
        let prepared = try statement(sql)
        return try prepared.run(values)
    }

    /// Runs one statement; returns the number of rows it changed.
    @discardableResult
    public func execute(_ sql: String, _ values: [SQLiteValue] = []) throws -> Int {
        _ = try query(sql, values)
        return Int(sqlite3_changes(handle))
    }

    public func queryOne(_ sql: String, _ values: [SQLiteValue] = []) throws -> SQLiteRow? {
        try query(sql, values).first
    }

    /// Runs one statement and hands `body` each row as it is stepped, never
    /// holding them all: for reading a table of any size (`ssoctl migrate`).
    /// `body` must not run this same SQL text again (one prepared statement).
    public func forEachRow(_ sql: String, _ values: [SQLiteValue] = [], _ body: (SQLiteRow) throws -> Void) throws {
        try statement(sql).each(values, body)
    }

    /// Runs `body` inside `BEGIN IMMEDIATE … COMMIT`: the write lock is taken
    /// up front, so two writers never deadlock upgrading from read to write.
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            _ = try? execute("ROLLBACK")
            throw error
        }
    }

    /// Changes whenever another connection commits (PRAGMA data_version):
    /// a cheap test for "reload what I cached".
    /// Read with one step and no row built: resource servers ask it on
    /// every request, and the general `query` path was most of its cost.
    public func dataVersion() throws -> Int64 {
        try statement("PRAGMA data_version").firstInteger()
    }

    public var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }
}

/// One prepared statement, finalized with this object.
final class SQLiteStatement {
    private let handle: OpaquePointer
    private let onError: (Int32) -> SQLiteError

    init(database: OpaquePointer, sql: String, onError: @escaping (Int32) -> SQLiteError) throws {
        var prepared: OpaquePointer?
        let status = sqlite3_prepare_v3(database, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &prepared, nil)
        guard status == SQLITE_OK, let statement = prepared else {
            sqlite3_finalize(prepared)
            throw onError(status)
        }
        handle = statement
        self.onError = onError
    }

    deinit { sqlite3_finalize(handle) }

    func run(_ values: [SQLiteValue]) throws -> [SQLiteRow] {
        var rows: [SQLiteRow] = []
        try each(values) { rows.append($0) }
        return rows
    }

    func each(_ values: [SQLiteValue], _ body: (SQLiteRow) throws -> Void) throws {
        defer {
            sqlite3_reset(handle)
            sqlite3_clear_bindings(handle)
        }
        guard Int(sqlite3_bind_parameter_count(handle)) == values.count else {
            throw SQLiteError(code: SQLITE_RANGE, message: "expected \(sqlite3_bind_parameter_count(handle)) parameters, got \(values.count)")
        }
        for (offset, value) in values.enumerated() { try bind(value, at: Int32(offset + 1)) }
        while true {
            let status = sqlite3_step(handle)
            if status == SQLITE_DONE { break }
            guard status == SQLITE_ROW else { throw onError(status) }
            try body(SQLiteRow(values: (0..<sqlite3_column_count(handle)).map(column)))
        }
    }

    /// The first row's first column as an integer (0 when there is no row),
    /// for a statement without parameters.
    func firstInteger() throws -> Int64 {
        defer { sqlite3_reset(handle) }
        let status = sqlite3_step(handle)
        if status == SQLITE_DONE { return 0 }
        guard status == SQLITE_ROW else { throw onError(status) }
        return sqlite3_column_int64(handle, 0)
    }

    private func bind(_ value: SQLiteValue, at index: Int32) throws {
        let status: Int32
        switch value {
        case .integer(let number): status = sqlite3_bind_int64(handle, index, number)
        case .real(let number): status = sqlite3_bind_double(handle, index, number)
        // The exact byte length, never -1: with -1 SQLite stops at the first
        // NUL, so "alice@example.com\0x" would be bound as alice's address
        // (the outside review's lock bypass). Identifiers are bytes.
        case .text(let text):
            status = text.withCString { sqlite3_bind_text(handle, index, $0, Int32(text.utf8.count), gatehouse_sqlite_transient()) }
        case .blob(let bytes):
            status = bytes.withUnsafeBytes { sqlite3_bind_blob(handle, index, $0.baseAddress, Int32(bytes.count), gatehouse_sqlite_transient()) }
        case .null: status = sqlite3_bind_null(handle, index)
        }
        guard status == SQLITE_OK else { throw onError(status) }
    }

    private func column(_ index: Int32) -> SQLiteValue {
        switch sqlite3_column_type(handle, index) {
        case SQLITE_INTEGER: return .integer(sqlite3_column_int64(handle, index))
        case SQLITE_FLOAT: return .real(sqlite3_column_double(handle, index))
        case SQLITE_TEXT:
            // By length, like the binding: a stored NUL must not cut the value
            // short. (SQLite: call _text first, then _bytes.)
            let pointer = sqlite3_column_text(handle, index)
            let count = Int(sqlite3_column_bytes(handle, index))
            guard count > 0, let pointer else { return .text("") }
            return .text(String(decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self))
        case SQLITE_BLOB:
            let count = Int(sqlite3_column_bytes(handle, index))
            guard count > 0, let pointer = sqlite3_column_blob(handle, index) else { return .blob([]) }
            return .blob(Array(UnsafeRawBufferPointer(start: pointer, count: count)))
        default: return .null
        }
    }
}
