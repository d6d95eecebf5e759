/// Why a message was refused before it existed. `detail` is log-safe: it
/// names the field and the reason, never the refused value (an address or
/// a name someone typed into a form).
public struct MailMessageError: Error, CustomStringConvertible, Equatable {
    public enum Code: String, Sendable {
        case invalidAddress, invalidDisplayName, invalidSubject, invalidDomain
    }
    public let code: Code
    public let detail: String
    public init(_ code: Code, detail: String) { self.code = code; self.detail = detail }
    public var description: String { "\(code.rawValue): \(detail)" }
}
