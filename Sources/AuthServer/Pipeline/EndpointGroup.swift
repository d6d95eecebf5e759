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

/// A group that is one row (`served`): its rows and its answers follow.
public protocol OneEndpointGroup: EndpointGroup {
    var served: SingleEndpoint { get }
}

extension OneEndpointGroup {
    public var endpoints: [Endpoint] { [served.endpoint] }
    public func respond(to request: Request) throws -> Response { try served.respond(to: request) }
}

/// A group of several rows, routed by path (`table`).
public protocol RoutedEndpointGroup: EndpointGroup {
    var table: RouteTable { get }
}

extension RoutedEndpointGroup {
    public var endpoints: [Endpoint] { table.endpoints }
    public func respond(to request: Request) throws -> Response { try table.respond(to: request) }
}
