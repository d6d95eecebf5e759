public struct HTTPSClientError: Error, CustomStringConvertible {
    public enum Code: String, Sendable {
        case invalidURL, invalidRequest, library, resolve, connect, tls, caFile, certificate, timeout, io, responseTooLarge,
             malformedResponse
    }
    public let code: Code
    /// Log-only detail (libcurl's error text, the file that could not be read, ...).
    public let detail: String
    public init(_ code: Code, detail: String) { self.code = code; self.detail = detail }
    public var description: String { "\(code.rawValue): \(detail)" }
}
