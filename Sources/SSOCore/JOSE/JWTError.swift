/// Why a compact JWS was refused by `CompactJWT`'s parse or verification
/// pipeline. `code` is safe to show a client (each verifier maps it to its
/// own wire error); `detail` is for the log only and never holds the token.
public struct JWTError: Error, CustomStringConvertible {
    public enum Code: String, Sendable {
        case malformed, criticalHeader, unsupportedAlgorithm, wrongType, missingKeyID, unknownKey, invalidSignature
    }
    public let code: Code
    /// Log-only detail; never sent to a client.
    public let detail: String
    public init(_ code: Code, detail: String) { self.code = code; self.detail = detail }
    public var description: String { "\(code.rawValue): \(detail)" }
}
