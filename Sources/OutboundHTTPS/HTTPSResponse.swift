/// What an `HTTPSClient` exchange returned: any status, a 3xx included
/// (redirects are never followed).
public struct HTTPSResponse: Sendable {
    public let status: Int
    /// Header names in lower case; a repeated header keeps its last value.
    public let headers: [String: String]
    public let body: [UInt8]

    public init(status: Int, headers: [String: String], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    public var isSuccess: Bool { (200...299).contains(status) }
}
