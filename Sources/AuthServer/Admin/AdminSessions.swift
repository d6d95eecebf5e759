import IssuerStorage
import SSOCore

/// `/admin/v1/sessions…`: what `ssoctl sessions` does. A session names its
/// user by the user's `id` (`sub`), as the admin API's users are named.
struct AdminSessions {
    let services: IssuerServices

    static let path = AdminAPIResponder.base + "/sessions"

    /// Newest first, then by sid: one keyset read per page (SSOSessionReads.page).
    func list(_ exchange: EndpointExchange) throws -> Response {
        let query = try AdminListQuery(exchange.parameters, filters: ["user"])
        var userID: Int64?
        if let subject = query.filters["user"] {
            guard let user = try services.users.find(subject: subject) else { throw AdminProblem.noSuch("user", subject) }
            userID = user.id
        }
        var after: (createdAt: Int64, sid: String)?
        if let key = query.after {
            let parts = key.split(separator: ".", maxSplits: 1)
            guard parts.count == 2, let createdAt = Int64(parts[0]) else { throw AdminProblem.invalidQuery("next is not a cursor of this list") }
            after = (createdAt, String(parts[1]))
        }
        let sessions = try services.sessions.page(userID: userID, after: after, limit: query.limit + 1)
        var subjects: [Int64: String] = [:]
        return try AdminPage(fetched: sessions, limit: query.limit, key: { "\($0.createdAt).\($0.sid)" }, map: { session in
            SessionJSON(session, user: try subject(of: session.userID, &subjects))
        }).response(url: services.settings.issuer + Self.path, query: query)
    }

    /// The user's `sub`, looked up once per page for each user (`known`).
    func subject(of userID: Int64, _ known: inout [Int64: String]) throws -> String {
        if let subject = known[userID] { return subject }
        let subject = try services.users.find(id: userID)?.subject ?? ""
        known[userID] = subject
        return subject
    }

    /// One session as the admin API shows it.
    func json(_ session: SSOSessionListing) throws -> SessionJSON {
        var known: [Int64: String] = [:]
        return SessionJSON(session, user: try subject(of: session.userID, &known))
    }

    func item(_ exchange: EndpointExchange) throws -> Response {
        try AdminRequest.noQuery(exchange)
        let sid = try AdminRequest.id(exchange, "sid", naming: "session")
        if exchange.request.method == "GET" {
            guard let session = try services.sessions.listing(sid: sid) else { throw AdminProblem.noSuch("session", sid) }
            return try AdminETag.answer(try json(session))
        }
        // `ssoctl sessions revoke`.
        let caller = try exchange.admin()
        let ended = try services.accountChanges.endSession(sid: sid) { session in
            try AdminETag.check(exchange.request, current: try json(session))
        }
        AdminAPIAudit.changed("sessions revoke", target: sid, caller, user: ended.email)
        return Response(status: 204).logging("admin API: \(caller.clientID) ended session \(sid)")
    }
}
