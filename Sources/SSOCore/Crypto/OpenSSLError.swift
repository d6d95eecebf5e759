import COpenSSL

/// A failure inside OpenSSL. The description names the operation only; the
/// drained error queue goes to `detail`, for logs, never to the wire.
public struct OpenSSLError: Error, CustomStringConvertible {
    public let operation: String
    public let detail: String

    init(_ operation: String) {
        self.operation = operation
        self.detail = OpenSSLError.drainErrorQueue()
    }

    public var description: String { "OpenSSL \(operation) failed: \(detail)" }

    /// Empties OpenSSL's thread-local error queue so one failure never leaks
    /// into the report of the next operation.
    static func drainErrorQueue() -> String {
        var messages: [String] = []
        while true {
            let code = ERR_get_error_all(nil, nil, nil, nil, nil)
            if code == 0 { break }
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            messages.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return messages.joined(separator: "; ")
    }
}
