import CPostgreSQL
import Glibc
import SSOCore

/// One libpq connection, owned by one single-threaded responder process:
/// prepared statements (each SQL text prepared once per connection, and
/// again after a reconnect), parameters and results in the binary format
/// with explicit lengths, and bounded waits.
///
/// Never a hang: every statement is sent with libpq's asynchronous calls and
/// its reply awaited with poll() against a deadline, so a server that
/// stopped answering (a frozen primary, a cut network) costs at most
/// `replyTimeout` before the call throws `unavailable` and the connection is
/// dropped. The next call reconnects, no sooner than a backoff after the
/// last failed attempt (0.25 s doubling to 5 s), so while the database is
/// down requests fail fast instead of each waiting out a connect timeout.
public final class PostgreSQLConnection {
    public let url: String
    let replyTimeoutMilliseconds: Int32
    private var handle: OpaquePointer?
    private var statementNames: [String: String] = [:]
    private var nextConnectAttempt: Int64 = 0
    private var backoffMilliseconds: Int64 = 0
    /// Inside `transaction`: a lost connection cannot be retried transparently.
    private var inTransaction = false
    /// LISTEN channels, subscribed again on every connect.
    private var channels: [String] = []
    /// Connects plus notifications received: see `changesSeen()`.
    private var changeCount: Int64 = 0

    /// Connects at once (and throws if it cannot), so a misconfigured URL is
    /// reported when the process starts, not at its first request; with
    /// `connectNow: false`, at the first statement.
    public init(url: String, replyTimeoutMilliseconds: Int32 = 8000, connectNow: Bool = true) throws {
        self.url = url
        self.replyTimeoutMilliseconds = replyTimeoutMilliseconds
        if connectNow { try connect() }
    }

    deinit { disconnect() }

    // MARK: Notifications

    /// Subscribes to `channel` (LISTEN), on this connection and every later
    /// one. `channel` is a fixed lower-case identifier of the caller's.
    public func listen(_ channel: String) throws {
        precondition(!channel.isEmpty && channel.utf8.allSatisfy { $0 == UInt8(ascii: "_") || (0x61...0x7A).contains($0) },
                     "a channel is a lower-case identifier")
        guard !channels.contains(channel) else { return }
        channels.append(channel)
        if handle != nil { try executeScript("LISTEN \(channel)") }
    }

    /// A number that grows with every notification on a listened channel
    /// (NOTIFY, delivered when the notifying transaction commits) and every
    /// (re)connect: unchanged means nothing was announced since the last
    /// call. Reads what the socket already holds without a round trip, so
    /// a cache can check it on every request. A notification committed on
    /// another node can still be in flight for a moment when this returns.
    public func changesSeen() throws -> Int64 {
        var connection = try connected()
        if gatehouse_PQconsumeInput(connection) == 0 || gatehouse_PQstatus(connection) != CONNECTION_OK {
            _ = lost("the connection broke")
            connection = try connected()
            guard gatehouse_PQconsumeInput(connection) == 1 else { throw lost("the connection broke") }
        }
        while let notification = gatehouse_PQnotifies(connection) {
            gatehouse_PQfreemem(notification)
            changeCount += 1
        }
        return changeCount
    }

    // MARK: Statements

    /// Runs one statement and returns every row it yields.
    @discardableResult
    public func query(_ sql: String, _ values: [PostgreSQLValue] = []) throws -> [PostgreSQLRow] {
        try run(sql, values).rows
    }

    /// Runs one statement; returns the number of rows it changed.
    @discardableResult
    public func execute(_ sql: String, _ values: [PostgreSQLValue] = []) throws -> Int {
        try run(sql, values).changed
    }

    public func queryOne(_ sql: String, _ values: [PostgreSQLValue] = []) throws -> PostgreSQLRow? {
        try query(sql, values).first
    }

    /// Runs statements that take no parameters (DDL, SET), unprepared.
    public func executeScript(_ sql: String) throws {
        let connection = try connected()
        guard gatehouse_PQsendQuery(connection, sql) == 1 else { throw lost("send failed") }
        _ = try awaitResults(connection)
    }

    /// Runs `body` inside one transaction (READ COMMITTED, the server's
    /// default): committed when it returns, rolled back when it throws.
    /// A BEGIN that finds the connection broken reconnects and begins again
    /// (nothing was sent yet); a failure after it cannot be retried here.
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        do { try execute("BEGIN") } catch let error as PostgreSQLError where error.connectionLost {
            try execute("BEGIN")
        }
        inTransaction = true
        defer { inTransaction = false }
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            if handle != nil { _ = try? execute("ROLLBACK") }
            throw error
        }
    }

    private func run(_ sql: String, _ values: [PostgreSQLValue]) throws -> (rows: [PostgreSQLRow], changed: Int) {
        let connection = try connected()
        let types = values.map(\.typeOID)
        let name = try preparedName(sql, types: types, connection)
        return try PostgreSQLWire.withParameters(values) { pointers, lengths, formats in
            guard gatehouse_PQsendQueryPrepared(connection, name, Int32(values.count), pointers, lengths, formats, 1) == 1 else {
                throw lost("send failed")
            }
            return try awaitResults(connection)
        }
    }

    /// The server-side name of `sql` prepared with these parameter types.
    private func preparedName(_ sql: String, types: [Oid], _ connection: OpaquePointer) throws -> String {
        let key = sql + "\u{0}" + types.map(String.init).joined(separator: ",")
        if let name = statementNames[key] { return name }
        let name = "gh\(statementNames.count + 1)"
        guard gatehouse_PQsendPrepare(connection, name, sql, Int32(types.count), types) == 1 else { throw lost("send failed") }
        _ = try awaitResults(connection)
        statementNames[key] = name
        return name
    }

    // MARK: Waiting with a deadline

    /// Flushes what is queued, then collects every result of the call;
    /// throws the first error result.
    private func awaitResults(_ connection: OpaquePointer) throws -> (rows: [PostgreSQLRow], changed: Int) {
        let deadline = MonotonicDeadline(milliseconds: Int(replyTimeoutMilliseconds))
        while true {
            let flushed = gatehouse_PQflush(connection)
            if flushed == 0 { break }
            guard flushed > 0 else { throw lost("flush failed") }
            try wait(connection, for: Int16(POLLOUT), until: deadline)
        }
        var rows: [PostgreSQLRow] = []
        var changed = 0
        var failure: PostgreSQLError?
        while true {
            while gatehouse_PQisBusy(connection) == 1 {
                try wait(connection, for: Int16(POLLIN), until: deadline)
                guard gatehouse_PQconsumeInput(connection) == 1 else { throw lost("read failed") }
            }
            guard let result = gatehouse_PQgetResult(connection) else { break }
            defer { gatehouse_PQclear(result) }
            switch gatehouse_PQresultStatus(result) {
            case PGRES_TUPLES_OK:
                rows += try PostgreSQLWire.rows(of: result)
                changed += Self.changedCount(result)
            case PGRES_COMMAND_OK:
                changed += Self.changedCount(result)
            default:
                if failure == nil { failure = Self.error(of: result, connection) }
            }
        }
        if let failure {
            if gatehouse_PQstatus(connection) != CONNECTION_OK { disconnect() }
            throw failure
        }
        return (rows, changed)
    }

    private func wait(_ connection: OpaquePointer, for events: Int16, until deadline: MonotonicDeadline) throws {
        var descriptor = pollfd(fd: gatehouse_PQsocket(connection), events: events, revents: 0)
        guard descriptor.fd >= 0 else { throw lost("no socket") }
        while true {
            let remaining = deadline.remainingMilliseconds
            guard remaining > 0 else { throw lost("no reply within \(replyTimeoutMilliseconds) ms") }
            let ready = poll(&descriptor, 1, Int32(clamping: remaining))
            if ready > 0 { return }
            if ready < 0 && errno != EINTR { throw lost("poll failed: errno \(errno)") }
        }
    }

    private static func changedCount(_ result: OpaquePointer) -> Int {
        Int(String(cString: gatehouse_PQcmdTuples(result))) ?? 0
    }

    private static func error(of result: OpaquePointer, _ connection: OpaquePointer) -> PostgreSQLError {
        let state = gatehouse_PQresultErrorField(result, gatehouse_pg_diag_sqlstate()).map { String(cString: $0) } ?? ""
        let message = gatehouse_PQresultErrorField(result, gatehouse_pg_diag_message_primary()).map { String(cString: $0) }
            ?? String(cString: gatehouse_PQerrorMessage(connection))
        let broken = gatehouse_PQstatus(connection) != CONNECTION_OK
        return PostgreSQLError(sqlState: state, message: message, connectionLost: broken && state.isEmpty)
    }

    // MARK: Connecting

    private func connected() throws -> OpaquePointer {
        if let handle, gatehouse_PQstatus(handle) == CONNECTION_OK { return handle }
        if inTransaction { throw lost("connection lost inside a transaction") }
        try connect()
        guard let handle else { throw PostgreSQLError.unavailable("not connected") }
        return handle
    }

    /// Defaults a URL can override (they come first; later keywords win):
    /// a 3 s connect timeout per host, 5 s for unacknowledged data (a dead
    /// peer), and the application name for pg_stat_activity.
    static let connectionDefaults: [(String, String)] = [
        ("connect_timeout", "3"), ("tcp_user_timeout", "5000"), ("application_name", "gatehouse"),
    ]

    private func connect() throws {
        // Loaded at the first connection, not linked (CPostgreSQL/shim.h).
        guard gatehouse_libpq_load() == 1 else {
            throw PostgreSQLError(sqlState: "", message: "GATEHOUSE_DATABASE_URL needs libpq (apt-get install libpq5): "
                                  + String(cString: gatehouse_libpq_error()))
        }
        disconnect()
        let now = MonotonicDeadline.nowMilliseconds()
        guard now >= nextConnectAttempt else {
            throw PostgreSQLError.unavailable("reconnecting; next attempt in \(nextConnectAttempt - now) ms")
        }
        let keywords = Self.connectionDefaults.map(\.0) + ["dbname"]
        let values = Self.connectionDefaults.map(\.1) + [url]
        let connection = PostgreSQLWire.withCStrings(keywords) { keys in
            PostgreSQLWire.withCStrings(values) { vals in gatehouse_PQconnectdbParams(keys, vals, 1) }
        }
        guard let connection, gatehouse_PQstatus(connection) == CONNECTION_OK else {
            let message = connection.map { String(cString: gatehouse_PQerrorMessage($0)) } ?? "out of memory"
            if let connection { gatehouse_PQfinish(connection) }
            backoffMilliseconds = min(max(backoffMilliseconds * 2, 250), 5000)
            nextConnectAttempt = now + backoffMilliseconds
            throw PostgreSQLError.unavailable(message.trimmingASCIIWhitespace(newlines: true))
        }
        handle = connection
        // Notices (CREATE ... IF NOT EXISTS, skipping) are not errors and
        // libpq's default would print them on standard error.
        gatehouse_PQsetNoticeProcessor(connection, { _, _ in }, nil)
        backoffMilliseconds = 0
        nextConnectAttempt = 0
        // A statement the server itself gives up on: before our reply deadline.
        let listens = channels.map { "; LISTEN \($0)" }.joined()
        try executeScript("SET statement_timeout = \(max(1000, replyTimeoutMilliseconds - 2000)); SET lock_timeout = 4000" + listens)
        // Whatever was announced while this process had no connection was
        // not delivered to it: a new connection counts as a change.
        changeCount += 1
    }

    private func disconnect() {
        if let handle { gatehouse_PQfinish(handle) }
        handle = nil
        statementNames.removeAll()
    }

    /// Drops the broken connection; the next call reconnects.
    private func lost(_ why: String) -> PostgreSQLError {
        let detail = handle.map { String(cString: gatehouse_PQerrorMessage($0)).trimmingASCIIWhitespace(newlines: true) } ?? ""
        disconnect()
        return .unavailable(detail.isEmpty ? why : "\(why): \(detail)")
    }
}
