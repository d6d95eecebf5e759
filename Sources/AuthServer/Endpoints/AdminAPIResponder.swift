import IssuerStorage
import SSOCore

/// The admin API, `ISSUER/admin/v1/…` (docs/ADMIN-API.md): users, clients,
/// APIs, sessions and signing keys, as `ssoctl` changes them, for a client
/// granted `gatehouse:admin` (every method) or `gatehouse:admin:read`
/// (GET). One row per resource; a row's handler picks the operation by
/// method. Every answer is `no-store`: some carry secrets made once.
///
/// | path | methods |
/// | --- | --- |
/// | `users` | GET (list), POST |
/// | `users/{id}` | GET, PATCH, DELETE |
/// | `users/{id}/unlock` | POST |
/// | `clients` | GET (list), POST |
/// | `clients/{client_id}` | GET, PATCH, DELETE |
/// | `clients/{client_id}/secret` | POST |
/// | `apis` | GET (list), POST, DELETE `?audience=` |
/// | `sessions` | GET (list) |
/// | `sessions/{sid}` | GET, DELETE |
/// | `keys` | GET (list) |
/// | `keys/rotate` | POST |
/// | `keys/{kid}` | GET |
/// | `keys/{kid}/retire` | POST |
public final class AdminAPIResponder: RoutedEndpointGroup {
    public static let base = "/admin/v1"
    public let table: RouteTable

    /// `GATEHOUSE_ADMIN_API=off`: no rows, so every path is 404.
    public init(services: IssuerServices, config: GatehouseConfig) throws {
        guard config.adminAPI else {
            table = RouteTable([])
            return
        }
        let guards: [any EndpointGuard] = [try AdminAuthorization(services: services)]
        let errors = AdminProblems(realm: services.settings.issuer)
        let users = AdminUsers(services: services, messagesDirectory: config.messagesDirectory, defaultLanguage: config.brand.defaultLanguage)
        let clients = AdminClients(services: services, config: config)
        let apis = AdminAPIs(services: services)
        let sessions = AdminSessions(services: services)
        let keys = AdminKeys(services: services, config: config)
        func row(_ path: String, _ methods: [String], _ handler: @escaping (EndpointExchange) throws -> Response) -> Endpoint {
            Endpoint(Self.base + path, EndpointMethods(names: methods), input: .query, guards: guards, errors: errors, cache: .credentials,
                     handler: handler)
        }
        // Any other path under the API: a problem document, not a bare 404.
        func unknown(_ path: String) -> Endpoint {
            Endpoint(Self.base + path, EndpointMethods(names: ["GET", "POST", "PUT", "PATCH", "DELETE"]), errors: errors, cache: .credentials) { _ in
                throw AdminProblem.notFound("no such resource in the admin API")
            }
        }
        table = RouteTable([
            row("/users", ["GET", "POST"], users.collection),
            row("/users/{id}", ["GET", "PATCH", "DELETE"], users.item),
            row("/users/{id}/unlock", ["POST"], users.unlock),
            row("/clients", ["GET", "POST"], clients.collection),
            row("/clients/{client_id}", ["GET", "PATCH", "DELETE"], clients.item),
            row("/clients/{client_id}/secret", ["POST"], clients.secret),
            row("/apis", ["GET", "POST", "DELETE"], apis.collection),
            row("/sessions", ["GET"], sessions.list),
            row("/sessions/{sid}", ["GET", "DELETE"], sessions.item),
            row("/keys", ["GET"], keys.list),
            row("/keys/rotate", ["POST"], keys.rotate),
            row("/keys/{kid}", ["GET"], keys.item),
            row("/keys/{kid}/retire", ["POST"], keys.retire),
            unknown("/{resource}"), unknown("/{resource}/{id}"), unknown("/{resource}/{id}/{action}"),
        ])
    }
}
