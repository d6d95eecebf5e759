import IssuerStorage
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

/// Per-group Native SSO settings.
///
/// A group exists while some client names it; its settings row may be
/// missing, which means every setting is at its default (the seed profile
/// off). The responders read the switch on every request that needs it
/// (one primary-key read, like a client lookup), so `ssoctl client group`
/// takes effect at the next request without a restart and without a cache
/// to invalidate.
public final class NativeSSOGroups {
    let storage: any IssuerStorage

    public init(storage: any IssuerStorage) { self.storage = storage }

    /// True only when `group` is a group whose seed profile is switched on;
    /// false for nil (a client outside every group) and unknown names.
    public func allowsDeviceID(group: String?) throws -> Bool {
        guard let group else { return false }
        return try storage.read.nativeSSOGroups.allowsDeviceID(group: group)
    }

    /// The group, or nil when no client is in it.
    public func find(name: String) throws -> NativeSSOGroup? {
        let members = try storage.read.nativeSSOGroups.members(group: name)
        guard !members.isEmpty else { return nil }
        return NativeSSOGroup(name: name, members: members, allowsDeviceID: try allowsDeviceID(group: name))
    }

    /// The group, for an administrator: a bad name or a group no client is
    /// in is refused (ValidationError).
    public func group(named name: String) throws -> NativeSSOGroup {
        try ClientRegistry.validate(clientID: name, what: "native SSO group")
        guard let group = try find(name: name) else { throw Self.unknown(name) }
        return group
    }

    /// Switches the seed profile on or off for an existing group. A bad
    /// name or a group no client is in is refused (ValidationError) and
    /// nothing is written.
    @discardableResult
    public func setAllowsDeviceID(_ allowed: Bool, group name: String) throws -> NativeSSOGroup {
        try ClientRegistry.validate(clientID: name, what: "native SSO group")
        return try storage.write { tx in
            let members = try tx.nativeSSOGroups.members(group: name)
            guard !members.isEmpty else { throw Self.unknown(name) }
            try tx.nativeSSOGroups.setAllowsDeviceID(allowed, group: name)
            return NativeSSOGroup(name: name, members: members, allowsDeviceID: allowed)
        }
    }

    static func unknown(_ name: String) -> ValidationError {
        ValidationError("unknown native SSO group \(name): no client is in it")
    }
}
