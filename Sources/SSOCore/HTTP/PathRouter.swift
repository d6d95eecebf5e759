/// One process serving several exact paths, each with its own responder
/// (the login process answers /login, its passkey endpoints and /account).
/// Any other path is 404; nginx sends only the listed ones anyway.
public struct PathRouter: Responder {
    let routes: [String: Responder]

    public init(_ routes: [String: Responder]) { self.routes = routes }

    public func respond(to request: Request) throws -> Response {
        guard let responder = routes[request.path] else { return .plainError(404, "not_found") }
        return try responder.respond(to: request)
    }
}
