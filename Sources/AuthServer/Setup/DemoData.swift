import IssuerStorage
import SSOCore

/// The demo clients, user and APIs of the README ("Demo data"), created on
/// first start only.
public enum DemoData {
    public static let clientIDs = ["mobile-app-001", "mobile-app-002"]
    /// What the pages call them (`ssoctl client add --name`).
    public static let clientNames = ["mobile-app-001": "Demo Mobile App 1", "mobile-app-002": "Demo Mobile App 2"]
    public static let email = "alice@example.com"
    public static let name = "Alice Martin"
    public static let scopes = ["openid", "profile", "email", "offline_access", "device_sso", "api:serverA", "api:serverB"]
    /// The demo clients' native-SSO group.
    public static let group = "demo"

    /// The two demo resource servers: their origin is their audience.
    public static func apis(_ config: GatehouseConfig) -> [RegisteredAPI] {
        [RegisteredAPI(audience: config.apiAOrigin, name: "Demo API A", scopes: ["api:serverA"]),
         RegisteredAPI(audience: config.apiBOrigin, name: "Demo API B", scopes: ["api:serverB"])]
    }

    /// Registers the demo APIs when no API is registered yet and either the
    /// demo is being created now (`demo` and its clients missing) or some
    /// client already holds a demo API's scope: a deployment from before
    /// APIs were registered, whose tokens named these audiences. Runs at
    /// every `ssoctl setup`; an administrator's own registry is never
    /// touched.
    public static func ensureAPIs(_ services: IssuerServices, config: GatehouseConfig, demo: Bool) throws {
        guard try services.apis.all().isEmpty else { return }
        let firstDemoStart = try demo && clientIDs.allSatisfy { try services.clients.find(clientID: $0) == nil }
        let demoScopes = apis(config).flatMap(\.scopes)
        let upgrading = try services.clients.list().contains { client in client.scopes.contains { demoScopes.containsBytes($0) } }
        guard firstDemoStart || upgrading else { return }
        for api in apis(config) { try services.apis.add(audience: api.audience, name: api.name, scopes: api.scopes) }
    }

    /// A demo client being created again (an administrator deleted it)
    /// brings back a demo API that was removed too, unless its audience or
    /// its scope has been registered since for something else.
    static func restoreDemoAPIs(_ services: IssuerServices, config: GatehouseConfig) throws {
        for api in apis(config) where try services.apis.find(audience: api.audience) == nil {
            let registered = try services.apis.all()
            guard api.scopes.allSatisfy({ registered.owner(of: $0) == nil }) else { continue }
            try services.apis.add(audience: api.audience, name: api.name, scopes: api.scopes)
        }
    }

    /// Creates what is missing; returns true when the demo user was created
    /// now (so its password is worth printing).
    @discardableResult
    public static func ensure(_ services: IssuerServices, config: GatehouseConfig, password: String) throws -> Bool {
        try ensureAPIs(services, config: config, demo: true)
        let clients = services.clients, users = services.users, issuer = services.settings.issuer
        var addedClient = false
        for clientID in clientIDs where try clients.find(clientID: clientID) == nil {
            try restoreDemoAPIs(services, config: config)
            // A demo scope another API of the administrator's owns now is left out.
            let registered = try services.apis.all()
            let known = scopes.filter { registered.isKnown($0) }
            try clients.add(ClientRegistration(
                clientID: clientID,
                redirectURIs: ["myapp:auth/callback", issuer + "/mobile/postlogin.html", "http://127.0.0.1/callback"],
                postLogoutRedirectURIs: ["myapp:auth/logout", issuer + "/mobile/postlogout.html"],
                scopes: known, nativeSSOGroup: group, displayName: clientNames[clientID]))
            addedClient = true
        }
        // The demo shows both Native SSO profiles, so its group has the seed
        // (device_id) profile on; only when the clients are created, so an
        // administrator's `ssoctl client group demo --no-allow-device-id`
        // survives a restart.
        if addedClient { try services.nativeSSOGroups.setAllowsDeviceID(true, group: group) }
        guard try users.find(email: email) == nil else { return false }
        try users.add(email: email, name: name, password: password, roles: ["user"])
        return true
    }
}
