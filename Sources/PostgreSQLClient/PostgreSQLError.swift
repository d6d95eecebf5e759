import SSOCore

/// A failed PostgreSQL call: the server's SQLSTATE when it answered, or
/// `unavailable` when it could not be reached or the connection broke.
public struct PostgreSQLError: Error, CustomStringConvertible {
    /// Five characters (PostgreSQL Appendix A), or "" when no server answered.
    public let sqlState: String
    public let message: String
    /// The connection is gone (refused, timed out, closed mid-statement):
    /// nothing can be told about the statement, and the next call reconnects.
    public let connectionLost: Bool

    public init(sqlState: String, message: String, connectionLost: Bool = false) {
        self.sqlState = sqlState
        self.message = message
        self.connectionLost = connectionLost
    }

    static func unavailable(_ message: String) -> PostgreSQLError {
        PostgreSQLError(sqlState: "", message: message, connectionLost: true)
    }

    public var description: String {
        connectionLost ? "PostgreSQL unavailable: \(message)" : "PostgreSQL error \(sqlState): \(message)"
    }

    /// Temporary: the server is down, restarting, in recovery or read-only
    /// (a standby just promoted elsewhere), out of resources, or cancelled a
    /// statement that ran too long. The client is told to retry later.
    public var isTemporary: Bool {
        if connectionLost { return true }
        let temporaryClasses = ["08", "53", "57"]   // connection, resources, operator intervention
        let temporaryStates = ["25006", "40001", "40P01", "55P03"]  // read-only, serialization, deadlock, lock timeout
        return temporaryClasses.contains(String(sqlState.prefix(2))) || temporaryStates.contains(sqlState)
    }

    /// 23505 unique_violation: a unique key refused the row.
    public var isUniqueViolation: Bool { sqlState == "23505" }
    /// Class 23: any integrity constraint.
    public var isConstraint: Bool { sqlState.hasPrefix("23") }
    /// Class 22: the value itself is unacceptable (a NUL in text, invalid
    /// UTF-8, out of range): the request's fault, never the server's.
    public var isDataException: Bool { sqlState.hasPrefix("22") }
}

extension PostgreSQLError: HTTPResponseError {
    /// An unreachable or busy database is a 503 with Retry-After (RFC 9110
    /// §15.6.4), never a hang and never a 500; a value the database cannot
    /// take is a 400; anything else is a server fault, a logged 500 with no
    /// detail on the wire.
    public var response: Response {
        if isTemporary { return .plainError(503, "temporarily_unavailable", headers: [("Retry-After", "2")]) }
        if isDataException { return .plainError(400, "invalid_request") }
        return .plainError(500, "server_error")
    }
    public var logDetail: String { description }
}
