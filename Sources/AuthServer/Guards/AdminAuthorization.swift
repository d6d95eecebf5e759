import IssuerStorage
import SSOCore

/// Who is calling the admin API: a machine client, and where from.
struct AdminCaller {
    let clientID: String
    let ip: String
}

/// The admin API's door: an access token the issuer signed for the admin
/// API, from `client_credentials`, carrying the scope the method needs,
/// whose client still holds that scope now. Refusals are RFC 6750 §3's:
/// 401 for a missing or bad token, 403 for a good one without the right.
struct AdminAuthorization: EndpointGuard {
    let resource: IssuerProtectedResource
    let clients: ClientRegistry
    let apis: APIRegistry
    var readsInput: Bool { false }

    init(services: IssuerServices) throws {
        resource = IssuerProtectedResource(verifier: services.accessTokens, dpop: try services.dpop(), path: nil)
        clients = services.clients
        apis = services.apis
    }

    func check(_ exchange: inout EndpointExchange) throws {
        let request = exchange.request
        let active = try resource.activeToken(request)
        let claims = active.claims
        // RFC 8707 §2 / RFC 9068 §4: a token is good where its `aud` says;
        // the admin API is the registered API that owns its scopes.
        guard let api = try apis.owner(of: AdminAPIScopes.write), claims.aud.values.contains(where: { $0.bytesEqual(api.audience) }) else {
            throw IssuerBearerError(.invalidToken, "the access token is not for the admin API (its aud does not name it)",
                                    scheme: claims.cnf == nil ? .bearer : .dpop)
        }
        let needed = Self.scopes(for: request.method)
        // A user's token speaks for the user: the admin API answers only a
        // machine client (client_credentials), whose token has no session.
        guard active.user == nil, claims.sid == nil else {
            throw IssuerBearerError(.insufficientScope, "the admin API takes a client_credentials token, not a user's",
                                    requiredScope: needed[0], scheme: claims.cnf == nil ? .bearer : .dpop)
        }
        // RFC 6750 §3.1 insufficient_scope: "The request requires higher
        // privileges than provided by the access token." The client must
        // still hold the scope: taking it away ends its power at once, not
        // when its tokens expire.
        let held = try clients.find(clientID: claims.client_id)?.scopes ?? []
        guard needed.contains(where: { scope in held.containsBytes(scope) && claims.scopes.contains(where: { $0.utf8.elementsEqual(scope.utf8) }) })
        else {
            throw IssuerBearerError(.insufficientScope, "this request needs scope \(needed[0])", requiredScope: needed[0],
                                    scheme: claims.cnf == nil ? .bearer : .dpop)
        }
        exchange.adminCaller = AdminCaller(clientID: claims.client_id, ip: request.remoteAddress)
    }

    /// GET reads with either scope; every other method needs `gatehouse:admin`.
    static func scopes(for method: String) -> [String] {
        method == "GET" ? [AdminAPIScopes.write, AdminAPIScopes.read] : [AdminAPIScopes.write]
    }
}
