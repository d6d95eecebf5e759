import SSOCore

/// One process's endpoints by path: what `main.swift` serves, what the
/// tests call, and what RouteTableTests holds both nginx layouts to. A path
/// not in the table is 404 (nginx sends only the listed ones anyway).
public struct RouteTable: Responder {
    public let endpoints: [Endpoint]
    let responders: [String: EndpointResponder]

    public init(_ endpoints: [Endpoint]) {
        self.endpoints = endpoints
        var rowsByPath: [String: [Endpoint]] = [:]
        for endpoint in endpoints { rowsByPath[endpoint.path, default: []].append(endpoint) }
        responders = rowsByPath.mapValues { EndpointResponder(rows: $0) }
    }

    public var paths: [String] { Array(Set(endpoints.map(\.path))).sorted() }

    public func respond(to request: Request) throws -> Response {
        guard let responder = responders[request.path] else { return .plainError(404, "not_found") }
        return try responder.respond(to: request)
    }

    /// Rows that share a path and disagree about the prologue, or two
    /// rows of a path without a selector: mistakes a test must catch.
    public var inconsistencies: [String] {
        responders.values.flatMap { responder -> [String] in
            let first = responder.prologue
            var found = responder.rows.dropFirst().filter { $0.prologue != first.prologue }
                .map { "\($0.path): rows with different prologues" }
            if responder.rows.filter({ $0.selector == nil }).count != 1 { found.append("\(first.path): not exactly one row without a selector") }
            return found
        }
    }
}
