import SSOCore

/// One process's endpoints by path: what `main.swift` serves, what the
/// tests call, and what RouteTableTests holds both nginx layouts to. A path
/// not in the table is 404 (nginx sends only the listed ones anyway).
///
/// A row's path may name segments (`/admin/v1/users/{id}`): a request's
/// path matches it when it has as many segments, equal where the row's are
/// literal; the named ones reach the handler (EndpointExchange.pathParameter).
/// An exact path wins over any template, and among templates the one with
/// more literal segments wins, so `/admin/v1/keys/rotate` is never read as
/// the key `rotate`.
public struct RouteTable: Responder {
    public let endpoints: [Endpoint]
    let responders: [String: EndpointResponder]
    let templates: [(template: PathTemplate, responder: EndpointResponder)]

    public init(_ endpoints: [Endpoint]) {
        self.endpoints = endpoints
        var rowsByPath: [String: [Endpoint]] = [:]
        for endpoint in endpoints { rowsByPath[endpoint.path, default: []].append(endpoint) }
        var exact: [String: EndpointResponder] = [:]
        var templates: [(PathTemplate, EndpointResponder)] = []
        for (path, rows) in rowsByPath {
            if let template = PathTemplate(path) { templates.append((template, EndpointResponder(rows: rows))) } else {
                exact[path] = EndpointResponder(rows: rows)
            }
        }
        responders = exact
        self.templates = templates.sorted { ($0.0.literalCount, $0.0.path) > ($1.0.literalCount, $1.0.path) }
    }

    public var paths: [String] { Array(Set(endpoints.map(\.path))).sorted() }

    public func respond(to request: Request) throws -> Response {
        if let responder = responders[request.path] { return try responder.respond(to: request) }
        for (template, responder) in templates {
            if let parameters = template.match(request.path) { return try responder.respond(to: request, pathParameters: parameters) }
        }
        return .plainError(404, "not_found")
    }

    /// Rows that share a path and disagree about the prologue, or two
    /// rows of a path without a selector: mistakes a test must catch.
    public var inconsistencies: [String] {
        (Array(responders.values) + templates.map(\.responder)).flatMap { responder -> [String] in
            let first = responder.prologue
            var found = responder.rows.dropFirst().filter { $0.prologue != first.prologue }
                .map { "\($0.path): rows with different prologues" }
            if responder.rows.filter({ $0.selector == nil }).count != 1 { found.append("\(first.path): not exactly one row without a selector") }
            return found
        }
    }
}

/// A row path with named segments, `{name}`, each standing for exactly one
/// non-empty segment of a request's path.
struct PathTemplate {
    let path: String
    let segments: [Segment]

    enum Segment: Equatable {
        case literal(Substring)
        case named(String)
    }

    /// nil for a path without a named segment (matched exactly instead).
    init?(_ path: String) {
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).map { segment -> Segment in
            segment.hasPrefix("{") && segment.hasSuffix("}") && segment.count > 2
                ? .named(String(segment.dropFirst().dropLast())) : .literal(segment)
        }
        guard segments.contains(where: { if case .named = $0 { true } else { false } }) else { return nil }
        self.path = path
        self.segments = segments
    }

    var literalCount: Int { segments.filter { if case .literal = $0 { true } else { false } }.count }

    /// The named segments' values, or nil when `requestPath` does not fit.
    func match(_ requestPath: String) -> [String: String]? {
        let parts = requestPath.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == segments.count else { return nil }
        var values: [String: String] = [:]
        for (segment, part) in zip(segments, parts) {
            switch segment {
            case .literal(let literal): guard literal.utf8.elementsEqual(part.utf8) else { return nil }
            case .named(let name):
                guard !part.isEmpty else { return nil }
                values[name] = String(part)
            }
        }
        return values
    }
}
