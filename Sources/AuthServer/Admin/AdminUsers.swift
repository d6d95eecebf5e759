import IssuerStorage
import SSOCore

/// `/admin/v1/users…`: what `ssoctl user` does, over the same domain
/// operations (UserAccounts, AccountChanges, GettingIn).
struct AdminUsers {
    let services: IssuerServices
    let messagesDirectory: String
    let defaultLanguage: String

    static let path = AdminAPIResponder.base + "/users"

    func collection(_ exchange: EndpointExchange) throws -> Response {
        exchange.request.method == "GET" ? try list(exchange) : try create(exchange)
    }

    /// Users in the order they were made: a keyset walk by id, one range
    /// read per page whatever the table's size.
    func list(_ exchange: EndpointExchange) throws -> Response {
        let query = try AdminListQuery(exchange.parameters, filters: ["email"])
        if let email = query.filters["email"] {
            let found = try services.users.find(email: email).map { [$0] } ?? []
            return try AdminPage(found, key: { _ in "" }, query: query, map: { UserJSON($0, withID: true) })
                .response(url: services.settings.issuer + Self.path, query: query)
        }
        let afterID: Int64
        if let after = query.after {
            guard let id = Int64(after), id >= 0 else { throw AdminProblem.invalidQuery("next is not a cursor of this list") }
            afterID = id
        } else {
            afterID = 0
        }
        let users = try services.storage.read.users.page(afterID: afterID, limit: query.limit + 1)
        return try AdminPage(fetched: users, limit: query.limit, key: { String($0.id) }, map: { UserJSON($0, withID: true) })
            .response(url: services.settings.issuer + Self.path, query: query)
    }

    /// `ssoctl user add` (a password) or `ssoctl user invite` (a mail).
    func create(_ exchange: EndpointExchange) throws -> Response {
        try AdminRequest.noQuery(exchange)
        let body = try AdminBody(exchange.request)
        try body.allowOnly(["email", "name", "password", "roles", "invite", "language"], readOnly: Self.readOnly)
        let email = try body.required("email", body.string)
        let name = try body.required("name", body.string)
        let roles = try body.strings("roles") ?? ["user"]
        let password = try body.string("password")
        let invite = try body.bool("invite") ?? false
        let language = try body.string("language")
        let caller = try exchange.admin()
        let user: User
        if invite {
            guard password == nil else { throw AdminProblem(400, .invalidValue, "Invalid value", "give password or invite, not both", member: "password") }
            let catalogue = try MessageCatalogue.load(directory: messagesDirectory, defaultLanguage: defaultLanguage)
            if let language, !catalogue.available.contains(language) {
                throw AdminProblem(400, .invalidValue, "Invalid value",
                                   "language is one of \(catalogue.available.sorted().joined(separator: ", ")): \(language.debugDescription)",
                                   member: "language")
            }
            user = try services.gettingIn.invite(email: email, name: name, roles: roles,
                                                 messages: catalogue.messages(language ?? catalogue.defaultLanguage))
            AdminAPIAudit.changed("user invite", target: user.email, caller, user: user.email)
            SecurityEvents.invitationSent(user: user.email, actor: caller.clientID)
        } else {
            guard language == nil else { throw AdminProblem(400, .invalidValue, "Invalid value", "language goes with invite", member: "language") }
            guard let password else { throw AdminProblem(400, .invalidValue, "Invalid value", "give password, or invite: true", member: "password") }
            user = try services.users.add(email: email, name: name, password: password, roles: roles)
            AdminAPIAudit.changed("user add", target: user.email, caller, user: user.email)
        }
        // RFC 9110 §15.3.2: 201 with the new resource's URL.
        return try AdminETag.answer(UserJSON(user, withID: true), status: 201,
                                    headers: [("Location", services.settings.issuer + Self.path + "/" + user.subject)])
            .logging("admin API: \(caller.clientID) added user \(user.subject)")
    }

    /// Members of a user that only the issuer sets.
    static let readOnly: Set<String> = ["id", "sub", "email_verified", "invitation_pending"]

    func item(_ exchange: EndpointExchange) throws -> Response {
        try AdminRequest.noQuery(exchange)
        let id = try AdminRequest.id(exchange, "id", naming: "user")
        switch exchange.request.method {
        case "GET": return try AdminETag.answer(UserJSON(try existing(id), withID: true))
        case "PATCH": return try patch(id, exchange)
        default: return try delete(id, exchange)
        }
    }

    func existing(_ id: String) throws -> User {
        guard let user = try services.users.find(subject: id) else { throw AdminProblem.noSuch("user", id) }
        return user
    }

    /// `ssoctl user update|disable|enable|passwd|totp --remove`, together,
    /// in one write unit (AccountChanges.administer).
    func patch(_ id: String, _ exchange: EndpointExchange) throws -> Response {
        let body = try AdminBody(exchange.request)
        try body.allowOnly(["name", "roles", "disabled", "password", "remove_passkeys", "remove_totp"], readOnly: Self.readOnly.union(["email"]))
        var patch = AccountPatch()
        patch.name = try body.string("name")
        patch.roles = try body.strings("roles")
        patch.disabled = try body.bool("disabled")
        patch.password = try body.string("password")
        patch.removePasskeys = try Self.onlyTrue(body, "remove_passkeys")
        patch.removeTOTP = try Self.onlyTrue(body, "remove_totp")
        let caller = try exchange.admin()
        let result = try services.accountChanges.administer(subject: id, patch) { user in
            try AdminETag.check(exchange.request, current: UserJSON(user, withID: true))
        }
        for command in result.commands { AdminAPIAudit.changed(command, target: result.user.email, caller, user: result.user.email) }
        return try AdminETag.answer(UserJSON(result.user, withID: true))
            .logging("admin API: \(caller.clientID) changed user \(id) (\(result.commands.joined(separator: ", ")))")
    }

    /// A flag that asks for an action: `true`, or absent.
    static func onlyTrue(_ body: AdminBody, _ name: String) throws -> Bool {
        guard let value = try body.bool(name) else { return false }
        guard value else { throw AdminProblem.wrongType(name, expected: "true (or absent)") }
        return true
    }

    /// `ssoctl user delete`: 204 (RFC 9110 §9.3.5).
    func delete(_ id: String, _ exchange: EndpointExchange) throws -> Response {
        let user = try existing(id)
        let caller = try exchange.admin()
        let erased = try services.accountChanges.delete(email: user.email) { found in
            // The address may name another account by now (erased, then made again).
            guard found.subject.bytesEqual(id) else { throw AdminProblem.noSuch("user", id) }
            try AdminETag.check(exchange.request, current: UserJSON(found, withID: true))
        }
        AdminAPIAudit.changed("user delete", target: erased.user.email, caller, user: erased.user.email)
        return Response(status: 204).logging("admin API: \(caller.clientID) deleted user \(id)")
    }

    /// `ssoctl user unlock`.
    func unlock(_ exchange: EndpointExchange) throws -> Response {
        try AdminRequest.noQuery(exchange)
        try AdminRequest.noBody(exchange)
        let user = try existing(try AdminRequest.id(exchange, "id", naming: "user"))
        let caller = try exchange.admin()
        let result = try services.accountChanges.unlock(email: user.email)
        AdminAPIAudit.changed("user unlock", target: result.user.email, caller, user: result.user.email)
        if result.lockedUntil != nil { SecurityEvents.accountUnlocked(user: result.user.email, actor: caller.clientID) }
        struct Body: Encodable { let was_locked: Bool }
        return try .json(Body(was_locked: result.lockedUntil != nil))
    }
}
