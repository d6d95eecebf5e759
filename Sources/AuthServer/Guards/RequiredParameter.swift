import SSOCore

/// A parameter the endpoint's RFC marks REQUIRED (RFC 7009 §2.1 `token`),
/// checked where the RFC's order puts it: before any key or proof is
/// looked at. Missing: `invalid_request` (RFC 6749 §5.2: "The request is
/// missing a required parameter").
public struct RequiredParameter: EndpointGuard {
    let name: String

    public init(_ name: String) { self.name = name }

    public var readsInput: Bool { true }

    public func check(_ exchange: inout EndpointExchange) throws {
        guard try exchange.parameters.single(name) != nil else { throw OAuthError.invalidRequest("\(name) is required") }
    }
}
