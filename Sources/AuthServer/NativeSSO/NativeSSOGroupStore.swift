import SSOCore

/// A native-SSO group as an administrator sees it: the clients that name it
/// (`ssoctl client add --native-sso-group`) and its settings.
public struct NativeSSOGroup: Equatable, Sendable {
    public let name: String
    /// Client ids, sorted.
    public let members: [String]
    /// The seed `device_id` profile (di_hash in ID tokens, device-id actor
    /// tokens at the exchange) is switched on for this group.
    public let allowsDeviceID: Bool
}

/// Per-group Native SSO settings (`native_sso_groups`, IssuerMigration6).
///
/// A group exists while some client names it; its settings row may be
/// missing, which means every setting is at its default (the seed profile
/// off). The responders read the switch from the database on every request
/// that needs it (one primary-key read, like ClientStore.find), so
/// `ssoctl client group` takes effect at the next request without a restart
/// and without a cache to invalidate.
public final class NativeSSOGroupStore {
    let database: SQLiteDatabase

    public init(database: SQLiteDatabase) { self.database = database }

    /// True only when `group` is a group whose seed profile is switched on;
    /// false for nil (a client outside every group) and unknown names.
    public func allowsDeviceID(group: String?) throws -> Bool {
        guard let group else { return false }
        return try database.queryOne("SELECT allow_device_id FROM native_sso_groups WHERE name = ?", [.text(group)])?.int(0) == 1
    }

    /// The group, or nil when no client is in it.
    public func find(name: String) throws -> NativeSSOGroup? {
        let members = try database.query("SELECT client_id FROM clients WHERE native_sso_group = ? ORDER BY client_id", [.text(name)])
            .map { $0.string(0) }
        guard !members.isEmpty else { return nil }
        return NativeSSOGroup(name: name, members: members, allowsDeviceID: try allowsDeviceID(group: name))
    }

    /// The group, for an administrator: a bad name or a group no client is
    /// in is refused (ValidationError).
    public func group(named name: String) throws -> NativeSSOGroup {
        try ClientStore.validate(clientID: name, what: "native SSO group")
        guard let group = try find(name: name) else { throw Self.unknown(name) }
        return group
    }

    /// Switches the seed profile on or off for an existing group. A bad
    /// name or a group no client is in is refused (ValidationError) and
    /// nothing is written.
    @discardableResult
    public func setAllowsDeviceID(_ allowed: Bool, group name: String) throws -> NativeSSOGroup {
        try ClientStore.validate(clientID: name, what: "native SSO group")
        return try database.transaction {
            guard let group = try find(name: name) else { throw Self.unknown(name) }
            try database.execute("""
                INSERT INTO native_sso_groups (name, allow_device_id) VALUES (?, ?)
                ON CONFLICT (name) DO UPDATE SET allow_device_id = excluded.allow_device_id
                """, [.text(name), .integer(allowed ? 1 : 0)])
            return NativeSSOGroup(name: name, members: group.members, allowsDeviceID: allowed)
        }
    }

    static func unknown(_ name: String) -> ValidationError {
        ValidationError("unknown native SSO group \(name): no client is in it")
    }
}
