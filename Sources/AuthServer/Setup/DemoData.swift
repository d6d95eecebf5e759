import IssuerStorage
import SSOCore

/// The demo clients and user of docs/DESIGN.md ("Demo data"), created on first start only.
public enum DemoData {
    public static let clientIDs = ["mobile-app-001", "mobile-app-002"]
    public static let email = "alice@example.com"
    public static let name = "Alice Martin"
    public static let scopes = ["openid", "profile", "email", "offline_access", "device_sso", "api:serverA", "api:serverB"]
    /// The demo clients' native-SSO group.
    public static let group = "demo"

    /// Creates what is missing; returns true when the demo user was created
    /// now (so its password is worth printing).
    @discardableResult
    public static func ensure(_ services: IssuerServices, password: String) throws -> Bool {
        let clients = services.clients, users = services.users, issuer = services.settings.issuer
        var addedClient = false
        for clientID in clientIDs where try clients.find(clientID: clientID) == nil {
            try clients.add(
                clientID: clientID,
                redirectURIs: ["myapp:auth/callback", issuer + "/mobile/postlogin.html", "http://127.0.0.1/callback"],
                postLogoutRedirectURIs: ["myapp:auth/logout", issuer + "/mobile/postlogout.html"],
                scopes: scopes, nativeSSOGroup: group)
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
