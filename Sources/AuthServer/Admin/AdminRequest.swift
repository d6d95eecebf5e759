import SSOCore

/// Checks every admin operation makes of the parts of a request it does
/// not use: they must be empty, so a misplaced parameter is an error, not
/// a no-op.
enum AdminRequest {
    /// Only `allowed` may be in the query.
    static func noQuery(_ exchange: EndpointExchange, except allowed: Set<String> = []) throws {
        if let name = exchange.parameters.names.first(where: { !allowed.contains($0) }) {
            throw AdminProblem.invalidQuery("this operation takes no query parameter \(name.debugDescription)")
        }
    }

    /// The `{name}` segment of the path, naming a `what` (user, client,
    /// session, key): every such id is at most 64 bytes, so a longer one
    /// names nothing and goes no further.
    static func id(_ exchange: EndpointExchange, _ name: String, naming what: String) throws -> String {
        let id = try exchange.pathParameter(name)
        guard id.utf8.count <= 64 else { throw AdminProblem.noSuch(what, id) }
        return id
    }

    /// An action with nothing to say (`POST …/unlock`): no body, or `{}`.
    static func noBody(_ exchange: EndpointExchange) throws {
        try AdminBody(exchange.request, allowEmpty: true).allowOnly([])
    }
}

/// The admin API's side of the audit log: one `admin_change` line per
/// change, in `ssoctl`'s words (`reason` is the command it amounts to),
/// with the calling client as `actor` and its address as `ip`. Never a
/// password, secret or token.
enum AdminAPIAudit {
    static func changed(_ command: String, target: String?, _ caller: AdminCaller, user: String? = nil, client: String? = nil) {
        SecurityEvents.adminChange(command, target: target, actor: caller.clientID, user: user, client: client, ip: caller.ip)
    }
}
