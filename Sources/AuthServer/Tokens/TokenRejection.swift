import IssuerStorage
import SSOCore

/// Why a token the issuer is asked about is not one it can rely on. The
/// endpoints map it to their own wire format (RFC 6750 at userinfo,
/// `{"active":false}` at introspection, silence at revocation, an error page
/// at logout); `detail` is for the log only and never holds the token.
public struct TokenRejection: Error, Equatable, CustomStringConvertible {
    public enum Reason: String, Sendable {
        case malformed, unsupportedAlgorithm, wrongType, unknownKey, invalidSignature, wrongIssuer
        case expired, notYetValid, revoked, sessionEnded, userDisabled, clientDeleted
    }
    public let reason: Reason
    public let detail: String
    public init(_ reason: Reason, _ detail: String) { self.reason = reason; self.detail = detail }
    public var description: String { "\(reason.rawValue): \(detail)" }
}
