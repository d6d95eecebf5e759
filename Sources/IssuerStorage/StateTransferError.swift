/// Why a move of the issuer's state between backends was refused or
/// failed. Nothing was changed by it: the source is only read, and the
/// target's copy is one transaction, rolled back.
public struct StateTransferError: Error, CustomStringConvertible, Equatable {
    public enum Code: String, Sendable {
        /// The target already holds issuer state.
        case targetNotEmpty
        /// The two schemas' tables or columns differ.
        case schemaMismatch
        /// The source's schema is not the one this build writes.
        case sourceOutOfDate
        /// A row cannot be carried over as it is (a value of the wrong
        /// type, a private key file missing, a sealed value that does not open).
        case unmovableRow
        /// The rows counted on the two sides after the copy differ.
        case countMismatch
    }

    public let code: Code
    /// For the operator who ran the command: what and where, never a secret.
    public let description: String

    public init(_ code: Code, _ description: String) {
        self.code = code
        self.description = description
    }
}
