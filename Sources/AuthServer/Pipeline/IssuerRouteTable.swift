import IssuerStorage
import SSOCore

/// The issuer's processes, one FastCGI pool each behind nginx.
public enum IssuerProcess: String, CaseIterable, Sendable {
    case authorize, login, token, jwks, discovery, userinfo, logout, revoke, introspect, par, ops, admin

    /// The processes that render pages or page texts, and so load the
    /// message catalogue.
    public var rendersPages: Bool { [.authorize, .login, .logout, .par].contains(self) }
}

/// Every issuer process's endpoints: the one list `main.swift` serves
/// (IssuerComposition.routeTable), the tests call, and both nginx layouts
/// are held to (RouteTableTests: every path of a process is a location
/// that passes to that process's pool, and every such location is a path
/// of the process). docs/ARCHITECTURE.md prints it as the issuer's map.
public enum IssuerRouteTable {
    public static func groups(_ process: IssuerProcess, services: IssuerServices, config: GatehouseConfig) throws -> [any EndpointGroup] {
        switch process {
        case .authorize: return [AuthorizeResponder(services: services)]
        // The sign-in form's steps, the app's name for the login page, and
        // the account page with its sign-in callback and its changes.
        case .login:
            return [try LoginResponder(services: services), ClientNameResponder(services: services), AccountResponder(services: services),
                    AccountSessionsResponder(services: services), AccountPasswordResponder(services: services),
                    AccountTOTPResponder(services: services), GettingInResponder(services: services),
                    FederationResponder(services: services), AccountLinksResponder(services: services)]
        case .token: return [try TokenResponder(services: services)]
        case .jwks: return [JWKSResponder(keys: services.signingKeys)]
        case .discovery:
            let document = DiscoveryDocument(config: config, uiLocales: MessageCatalogue.languages(directory: config.messagesDirectory))
            return [try DiscoveryResponder(document: document, apis: services.apis)]
        case .userinfo: return [try UserInfoResponder(services: services)]
        case .logout: return [LogoutResponder(services: services)]
        case .revoke: return [try RevocationResponder(services: services)]
        case .introspect: return [IntrospectionResponder(services: services)]
        // The clients' own requests about their requests and themselves:
        // pushed authorization requests and dynamic registration.
        case .par: return [try PushedAuthorizationResponder(services: services), RegistrationResponder(services: services)]
        case .ops: return [OpsResponder(services: services, settings: OpsSettings.of(home: config.home))]
        // The admin API (GATEHOUSE_ADMIN_API=off: none of its rows).
        case .admin: return [try AdminAPIResponder(services: services, config: config)]
        }
    }

    public static func table(_ process: IssuerProcess, services: IssuerServices, config: GatehouseConfig) throws -> RouteTable {
        RouteTable(try groups(process, services: services, config: config).flatMap(\.endpoints))
    }
}
