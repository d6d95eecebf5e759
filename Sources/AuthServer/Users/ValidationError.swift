import IssuerStorage
/// A refusal ssoctl (or a responder) reports as is: it names the problem
/// and leaves the database unchanged.
public struct ValidationError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
