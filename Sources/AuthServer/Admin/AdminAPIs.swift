import IssuerStorage
import SSOCore

/// `/admin/v1/apis`: what `ssoctl api` does, over APIRegistry. An API is
/// named by its audience, a URL, so it goes in the query (`?audience=`),
/// never in a path segment.
struct AdminAPIs {
    let services: IssuerServices

    static let path = AdminAPIResponder.base + "/apis"

    func collection(_ exchange: EndpointExchange) throws -> Response {
        switch exchange.request.method {
        case "GET": return try list(exchange)
        case "POST": return try create(exchange)
        default: return try remove(exchange)
        }
    }

    func list(_ exchange: EndpointExchange) throws -> Response {
        let query = try AdminListQuery(exchange.parameters, filters: ["audience"])
        var apis = try services.apis.all()
        if let audience = query.filters["audience"] { apis = apis.filter { $0.audience.bytesEqual(audience) } }
        return try AdminPage(apis, key: \.audience, query: query, map: APIJSON.init)
            .response(url: services.settings.issuer + Self.path, query: query)
    }

    /// `ssoctl api add`.
    func create(_ exchange: EndpointExchange) throws -> Response {
        try AdminRequest.noQuery(exchange)
        let body = try AdminBody(exchange.request)
        try body.allowOnly(["audience", "name", "scopes"])
        let audience = try body.required("audience", body.string)
        let scopes = try body.required("scopes", body.strings)
        let name = try body.string("name")
        let caller = try exchange.admin()
        let api = try services.apis.add(audience: audience, name: name, scopes: scopes)
        AdminAPIAudit.changed("api add", target: api.audience, caller)
        let location = services.settings.issuer + Self.path + "?" + FormParser.encode([("audience", api.audience)])
        return try AdminETag.answer(APIJSON(api), status: 201, headers: [("Location", location)])
            .logging("admin API: \(caller.clientID) added API \(api.audience)")
    }

    /// `ssoctl api remove`: the clients that lost its scopes, by id.
    func remove(_ exchange: EndpointExchange) throws -> Response {
        try AdminRequest.noQuery(exchange, except: ["audience"])
        guard let audience = try AdminListQuery.single(exchange.parameters, "audience") else {
            throw AdminProblem.invalidQuery("DELETE names the API to remove: ?audience=")
        }
        let caller = try exchange.admin()
        let changed = try services.apis.remove(audience: audience) { api in try AdminETag.check(exchange.request, current: APIJSON(api)) }
        AdminAPIAudit.changed("api remove", target: audience, caller)
        struct Body: Encodable { let clients_changed: [String] }
        return try .json(Body(clients_changed: changed)).logging("admin API: \(caller.clientID) removed API \(audience)")
    }
}
