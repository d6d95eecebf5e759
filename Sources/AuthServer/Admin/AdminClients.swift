import FoundationEssentials
import IssuerStorage
import SSOCore

/// `/admin/v1/clients…`: what `ssoctl client` does, over ClientRegistry.
/// A client reads as `ssoctl client list --json` shows it (ClientJSON).
struct AdminClients {
    let services: IssuerServices
    let config: GatehouseConfig

    /// Where `ssoctl setup` writes the app-link files (both layouts).
    var appLinksDirectory: String { config.home + "/applinks" }

    static let path = AdminAPIResponder.base + "/clients"

    /// What POST and PATCH both set, by member name.
    static let settings: Set<String> = [
        "name", "redirect_uris", "post_logout_redirect_uris", "scopes", "grant_types", "require_dpop", "require_par", "access_token_ttl",
        "refresh_token_ttl", "ios_app_id", "android_package", "android_cert_fingerprints", "backchannel_logout_uri",
        "token_endpoint_auth_method", "jwks", "jwks_uri", "require_signed_request_object", "id_token_signed_response_alg", "profile",
    ]
    /// Members of a client that only the issuer sets (or `ssoctl client group`).
    static let readOnly: Set<String> = ["type", "jwks_kids", "client_id", "native_sso_group", "client_secret"]

    func collection(_ exchange: EndpointExchange) throws -> Response {
        exchange.request.method == "GET" ? try list(exchange) : try create(exchange)
    }

    func list(_ exchange: EndpointExchange) throws -> Response {
        let query = try AdminListQuery(exchange.parameters, filters: [])
        return try AdminPage(try services.clients.list(), key: \.clientID, query: query, map: ClientJSON.init)
            .response(url: services.settings.issuer + Self.path, query: query)
    }

    /// `ssoctl client add`. A secret method without a secret gets one made
    /// here, shown once in the answer.
    func create(_ exchange: EndpointExchange) throws -> Response {
        try AdminRequest.noQuery(exchange)
        let body = try AdminBody(exchange.request)
        try body.allowOnly(Self.settings.union(["client_id", "native_sso_group", "client_secret"]), readOnly: ["type", "jwks_kids"])
        var registration = ClientRegistration(clientID: try body.required("client_id", body.string))
        registration.displayName = try body.string("name")
        registration.redirectURIs = try body.strings("redirect_uris") ?? []
        registration.postLogoutRedirectURIs = try body.strings("post_logout_redirect_uris") ?? []
        registration.scopes = try body.strings("scopes") ?? []
        registration.grantTypes = try body.strings("grant_types") ?? []
        registration.requireDPoP = try body.bool("require_dpop") ?? false
        registration.requirePAR = try body.bool("require_par") ?? false
        registration.accessTokenLifetime = try body.nullableInteger("access_token_ttl") ?? nil
        registration.refreshTokenLifetime = try body.nullableInteger("refresh_token_ttl") ?? nil
        registration.iosAppID = try body.nullableString("ios_app_id") ?? nil
        registration.androidPackage = try body.nullableString("android_package") ?? nil
        registration.androidCertificateFingerprints = try body.strings("android_cert_fingerprints") ?? []
        registration.backchannelLogoutURI = try body.nullableString("backchannel_logout_uri") ?? nil
        registration.authMethod = try body.string("token_endpoint_auth_method")
        registration.jwks = try body.objectText("jwks")
        registration.jwksURI = try body.nullableString("jwks_uri") ?? nil
        registration.requireSignedRequestObject = try body.bool("require_signed_request_object") ?? false
        registration.idTokenAlgorithm = try body.nullableString("id_token_signed_response_alg") ?? nil
        registration.profile = try body.nullableString("profile") ?? nil
        registration.nativeSSOGroup = try body.nullableString("native_sso_group") ?? nil
        registration.secret = try body.string("client_secret")
        var made: String?
        if registration.secret == nil, let method = registration.authMethod, ["client_secret_basic", "client_secret_post"].contains(method) {
            made = SecureRandom.token(byteCount: 32)
            registration.secret = made
        }
        let caller = try exchange.admin()
        let client = try services.clients.add(registration)
        AdminAPIAudit.changed("client add", target: client.clientID, caller, client: client.clientID)
        refreshAppLinkFiles()
        return try .json(NewClient(client: ClientJSON(client), secret: made), status: 201,
                         headers: [("Location", services.settings.issuer + Self.path + "/" + client.clientID), ("ETag", try Self.tag(client))])
            .logging("admin API: \(caller.clientID) added client \(client.clientID)")
    }

    /// The 201 answer: the client, and the secret made for it (once).
    struct NewClient: Encodable {
        let client: ClientJSON
        let secret: String?

        func encode(to encoder: Encoder) throws {
            try client.encode(to: encoder)
            var container = encoder.container(keyedBy: Keys.self)
            try container.encodeIfPresent(secret, forKey: .clientSecret)
        }

        enum Keys: String, CodingKey { case clientSecret = "client_secret" }
    }

    /// A client's tag covers its keys and secret too, which its JSON form
    /// names only by kid and type: replacing either is a change.
    static func tag(_ client: Client) throws -> String {
        try AdminETag.of(ClientJSON(client), also: [client.jwks ?? "", client.secretHash ?? ""])
    }

    func item(_ exchange: EndpointExchange) throws -> Response {
        try AdminRequest.noQuery(exchange)
        let clientID = try AdminRequest.id(exchange, "client_id", naming: "client")
        switch exchange.request.method {
        case "GET":
            guard let client = try services.clients.find(clientID: clientID) else { throw AdminProblem.noSuch("client", clientID) }
            return try AdminETag.answer(ClientJSON(client), tag: try Self.tag(client))
        case "PATCH": return try patch(clientID, exchange)
        default: return try delete(clientID, exchange)
        }
    }

    /// `ssoctl client update`: a list replaces the whole list; `null`
    /// resets a setting to the issuer's default.
    func patch(_ clientID: String, _ exchange: EndpointExchange) throws -> Response {
        let body = try AdminBody(exchange.request)
        try body.allowOnly(Self.settings, readOnly: Self.readOnly)
        var changes = ClientChanges()
        changes.displayName = try body.nullableString("name").map { $0 ?? "" }
        changes.redirectURIs = try body.strings("redirect_uris")
        changes.postLogoutRedirectURIs = try body.strings("post_logout_redirect_uris")
        changes.scopes = try body.strings("scopes")
        changes.grantTypes = try body.strings("grant_types")
        changes.requireDPoP = try body.bool("require_dpop")
        changes.requirePAR = try body.bool("require_par")
        changes.accessTokenLifetime = try body.nullableInteger("access_token_ttl").map { $0 ?? 0 }
        changes.refreshTokenLifetime = try body.nullableInteger("refresh_token_ttl").map { $0 ?? 0 }
        changes.iosAppID = try body.nullableString("ios_app_id").map { $0 ?? "" }
        changes.androidPackage = try body.nullableString("android_package").map { $0 ?? "" }
        changes.androidCertificateFingerprints = try body.strings("android_cert_fingerprints")
        if changes.androidPackage == "" && changes.androidCertificateFingerprints == nil { changes.androidCertificateFingerprints = [] }
        changes.backchannelLogoutURI = try body.nullableString("backchannel_logout_uri").map { $0 ?? "" }
        changes.authMethod = try body.nullableString("token_endpoint_auth_method").map { $0 ?? "" }
        changes.jwks = try body.objectText("jwks")
        changes.jwksURI = try body.string("jwks_uri")
        changes.requireSignedRequestObject = try body.bool("require_signed_request_object")
        changes.idTokenAlgorithm = try body.nullableString("id_token_signed_response_alg").map { $0 ?? "RS256" }
        changes.profile = try body.nullableString("profile").map { $0 ?? "none" }
        if changes.isEmpty { throw AdminProblem(400, .invalidValue, "Invalid value", "nothing to change: give at least one member") }
        if changes.jwks != nil && changes.jwksURI != nil {
            throw AdminProblem(400, .invalidValue, "Invalid value", "give jwks or jwks_uri, not both (RFC 7591 §2)", member: "jwks_uri")
        }
        let caller = try exchange.admin()
        let client = try services.clients.update(clientID: clientID, changes) { stored in
            try AdminETag.check(exchange.request, tag: try Self.tag(stored))
        }
        AdminAPIAudit.changed("client update", target: client.clientID, caller, client: client.clientID)
        refreshAppLinkFiles()
        return try AdminETag.answer(ClientJSON(client), tag: try Self.tag(client)).logging("admin API: \(caller.clientID) changed client \(clientID)")
    }

    /// `ssoctl client delete`.
    func delete(_ clientID: String, _ exchange: EndpointExchange) throws -> Response {
        let caller = try exchange.admin()
        try services.clients.delete(clientID: clientID) { stored in try AdminETag.check(exchange.request, tag: try Self.tag(stored)) }
        AdminAPIAudit.changed("client delete", target: clientID, caller, client: clientID)
        refreshAppLinkFiles()
        return Response(status: 204).logging("admin API: \(caller.clientID) deleted client \(clientID)")
    }

    /// `ssoctl client secret`: the caller's secret (204), or one made here
    /// and shown once (200).
    func secret(_ exchange: EndpointExchange) throws -> Response {
        try AdminRequest.noQuery(exchange)
        let clientID = try AdminRequest.id(exchange, "client_id", naming: "client")
        let body = try AdminBody(exchange.request, allowEmpty: true)
        try body.allowOnly(["client_secret"])
        let given = try body.string("client_secret")
        let secret = given ?? SecureRandom.token(byteCount: 32)
        let caller = try exchange.admin()
        try services.clients.replaceSecret(clientID: clientID, secret: secret)
        AdminAPIAudit.changed("client secret", target: clientID, caller, client: clientID)
        if given != nil { return Response(status: 204).logging("admin API: \(caller.clientID) replaced the secret of \(clientID)") }
        struct Body: Encodable {
            let client_id: String
            let client_secret: String
        }
        return try .json(Body(client_id: clientID, client_secret: secret)).logging("admin API: \(caller.clientID) made a secret for \(clientID)")
    }

    /// As `ssoctl client …` does after a change: the app-link files follow
    /// the clients' apps. Where this process may not write them (another
    /// owner, or no such directory), the next `ssoctl setup` does.
    func refreshAppLinkFiles() {
        guard FileManager.default.fileExists(atPath: appLinksDirectory) else { return }
        do { try AppLinkFiles.write(config, clients: services.clients.list(), to: appLinksDirectory) } catch {
            RequestLog.event(endpoint: "admin", message: "the app-link files in \(appLinksDirectory) were not rewritten: \(error)")
        }
    }
}
