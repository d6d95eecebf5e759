import IssuerStorage
/// A refusal ssoctl (or a responder) reports as is: it names the problem
/// and leaves the database unchanged. `kind` tells an HTTP caller (the
/// admin API) which status fits, so no caller reads the words to decide.
public struct ValidationError: Error, CustomStringConvertible {
    public enum Kind: Sendable {
        /// A value the rules refuse.
        case invalid
        /// The thing it names does not exist.
        case notFound
        /// What it would create exists already.
        case conflict
    }

    public let description: String
    public let kind: Kind

    public init(_ description: String, kind: Kind = .invalid) {
        self.description = description
        self.kind = kind
    }

    static func notFound(_ description: String) -> ValidationError { ValidationError(description, kind: .notFound) }
    static func conflict(_ description: String) -> ValidationError { ValidationError(description, kind: .conflict) }
}
