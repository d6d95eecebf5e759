import IssuerStorage
import SSOCore

/// `/admin/v1/sessions…`: what `ssoctl sessions` does. A session names its
/// user by the user's `id` (`sub`), as the admin API's users are named.
struct AdminSessions {
    let services: IssuerServices

    static let path = AdminAPIResponder.base + "/sessions"

    /// Newest first: the sort key puts a later `created_at` first, then
    /// orders by sid, so the keyset walk is total.
    func list(_ exchange: EndpointExchange) throws -> Response {
        let query = try AdminListQuery(exchange.parameters, filters: ["user"])
        var userID: Int64?
        if let subject = query.filters["user"] {
            guard let user = try services.users.find(subject: subject) else { throw AdminProblem.notFound("no user \(subject.debugDescription)") }
            userID = user.id
        }
        var subjects: [Int64: String] = [:]
        return try AdminPage(try services.sessions.list(userID: userID), key: Self.key, query: query) { session in
            SessionJSON(session, user: try subject(of: session.userID, &subjects))
        }.response(url: services.settings.issuer + Self.path, query: query)
    }

    static func key(_ session: SSOSessionListing) -> String {
        let newestFirst = String(UInt64(Int64.max - max(session.createdAt, 0)))
        return String(repeating: "0", count: 20 - newestFirst.count) + newestFirst + " " + session.sid
    }

    func subject(of userID: Int64, _ known: inout [Int64: String]) throws -> String {
        if let subject = known[userID] { return subject }
        let subject = try services.users.find(id: userID)?.subject ?? ""
        known[userID] = subject
        return subject
    }

    func item(_ exchange: EndpointExchange) throws -> Response {
        try AdminRequest.noQuery(exchange)
        let sid = try exchange.pathParameter("sid")
        if exchange.request.method == "GET" {
            guard sid.utf8.count <= 64, let session = try services.sessions.listing(sid: sid) else {
                throw AdminProblem.notFound("no session \(sid.debugDescription)")
            }
            var known: [Int64: String] = [:]
            return try AdminETag.answer(SessionJSON(session, user: try subject(of: session.userID, &known)))
        }
        // `ssoctl sessions revoke`.
        let caller = try exchange.admin()
        let ended = try services.accountChanges.endSession(sid: sid) { session in
            var known: [Int64: String] = [:]
            try AdminETag.check(exchange.request, current: SessionJSON(session, user: try subject(of: session.userID, &known)))
        }
        AdminAPIAudit.changed("sessions revoke", target: sid, caller, user: ended.email)
        return Response(status: 204).logging("admin API: \(caller.clientID) ended session \(sid)")
    }
}
