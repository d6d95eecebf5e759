import SSOCore

/// A responder made of endpoint rows (one endpoint, or a few that share a
/// purpose: the sign-in form's steps, the account page's passkeys). Its
/// rows go into its process's route table (IssuerRouteTable); the tests
/// call it as a responder.
public protocol EndpointGroup: Responder {
    var endpoints: [Endpoint] { get }
}

/// One endpoint served whatever the request's path (the route table has
/// already chosen it; tests call it with any path).
public struct SingleEndpoint: Responder {
    public let endpoint: Endpoint
    let responder: EndpointResponder

    public init(_ endpoint: Endpoint) {
        self.endpoint = endpoint
        responder = EndpointResponder(endpoint)
    }

    public func respond(to request: Request) throws -> Response { try responder.respond(to: request) }
}
