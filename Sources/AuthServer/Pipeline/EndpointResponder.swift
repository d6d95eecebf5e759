import SSOCore

/// The one pipeline: method → guards (the input parsed before the first
/// guard that reads it) → the row's handler → the dialect's rendering of
/// any refusal → the cache policy. Every endpoint of the issuer runs
/// through here, so none writes its own method check, form-error mapping
/// or cache headers.
public struct EndpointResponder: Responder {
    /// One path's rows: the first is the prologue's; `selector` picks the
    /// handler (Endpoint.selector).
    let rows: [Endpoint]

    public init(_ endpoint: Endpoint) { rows = [endpoint] }

    init(rows: [Endpoint]) {
        precondition(!rows.isEmpty)
        self.rows = rows
    }

    var prologue: Endpoint { rows[0] }

    public func respond(to request: Request) throws -> Response { try respond(to: request, pathParameters: [:]) }

    /// `pathParameters`: the named segments of a templated row's path (RouteTable).
    func respond(to request: Request, pathParameters: [String: String]) throws -> Response {
        let endpoint = prologue
        guard endpoint.methods.allows(request.method) else { return endpoint.errors.methodNotAllowed(allowed: endpoint.methods.names) }
        var exchange = EndpointExchange(request: request)
        exchange.pathParameters = pathParameters
        var response: Response
        do {
            for check in endpoint.guards {
                if check.readsInput { try parseInput(&exchange) }
                try check.check(&exchange)
            }
            try parseInput(&exchange)
            response = try row(for: exchange).handler(exchange)
        } catch {
            response = try endpoint.errors.render(error, exchange)
        }
        endpoint.cache.apply(to: &response)
        return response
    }

    func parseInput(_ exchange: inout EndpointExchange) throws {
        guard !exchange.inputParsed else { return }
        exchange.inputParsed = true
        let request = exchange.request
        switch prologue.input {
        case .none: return
        case .query: exchange.parameters = try request.queryParameters()
        case .form:
            exchange.parameters = try request.formParameters()
            exchange.parametersFromBody = true
        case .formOrQuery:
            exchange.parametersFromBody = request.method == "POST"
            exchange.parameters = exchange.parametersFromBody ? try request.formParameters() : try request.queryParameters()
        }
    }

    func row(for exchange: EndpointExchange) -> Endpoint {
        rows.first { $0.selector.map(exchange.parameters.names.contains) ?? false } ?? rows.first { $0.selector == nil } ?? prologue
    }
}
