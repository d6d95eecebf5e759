import IssuerStorage
import SSOCore

/// The admin API (`ISSUER/admin/v1/`) as an API of the issuer's own
/// registry: registered at every `ssoctl setup` when missing, owning the two
/// scopes a caller's token must carry. Its audience is the registered API
/// that owns `write`, so an issuer moved to a new URL keeps the one it had.
public enum AdminAPIScopes {
    /// Every operation.
    public static let write = "gatehouse:admin"
    /// GET only.
    public static let read = "gatehouse:admin:read"
    public static let all = [write, read]

    public static func audience(issuer: String) -> String { issuer + "/admin" }

    /// Registers the admin API when no API owns its scopes (a new home, or
    /// one from before the admin API); true when it did.
    @discardableResult
    public static func ensureRegistered(_ apis: APIRegistry, issuer: String) throws -> Bool {
        guard try apis.owner(of: write) == nil else { return false }
        try apis.add(audience: audience(issuer: issuer), name: "Gatehouse admin API", scopes: all)
        return true
    }

    /// True for the API that owns the admin scopes: it cannot be removed
    /// (without it, no token could reach the admin API again; turn the API
    /// off with GATEHOUSE_ADMIN_API=off instead).
    static func isAdminAPI(_ api: RegisteredAPI) -> Bool { api.scopes.containsBytes(write) }
}
