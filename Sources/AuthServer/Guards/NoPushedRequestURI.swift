import SSOCore

/// RFC 9126 §2.1: "2. Reject the request if the request_uri authorization
/// request parameter is provided." A pushed request cannot point at
/// another pushed request.
public struct NoPushedRequestURI: EndpointGuard {
    public init() {}

    public var readsInput: Bool { true }

    public func check(_ exchange: inout EndpointExchange) throws {
        guard exchange.parameters.values("request_uri").isEmpty else {
            throw OAuthError.invalidRequest("request_uri must not be pushed (RFC 9126 §2.1)")
        }
    }
}
