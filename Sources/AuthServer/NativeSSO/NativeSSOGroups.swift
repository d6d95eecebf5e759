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
/// A group is a name: the clients registered with it
/// (`--native-sso-group NAME`) are its members, and its settings row holds
/// its switches. Either may come first: an administrator can switch a
/// setting on for a group before adding its first client (the settings
/// wait for it), and a group without a settings row has every setting at
/// its default (the seed profile off). The responders read the switch on
/// every request that needs it (one primary-key read, like a client
/// lookup), so `ssoctl client group` takes effect at the next request
/// without a restart and without a cache to invalidate.
public final class NativeSSOGroups {
    let storage: any IssuerStorage

    public init(storage: any IssuerStorage) { self.storage = storage }

    /// True only when `group` is a group whose seed profile is switched on;
    /// false for nil (a client outside every group) and unknown names.
    public func allowsDeviceID(group: String?) throws -> Bool {
        guard let group else { return false }
        return try storage.read.nativeSSOGroups.allowsDeviceID(group: group)
    }

    /// The group, for an administrator: its members (none yet is fine) and
    /// settings. A bad name is refused (ValidationError).
    public func group(named name: String) throws -> NativeSSOGroup {
        try ClientRegistry.validate(clientID: name, what: "native SSO group")
        return NativeSSOGroup(name: name, members: try storage.read.nativeSSOGroups.members(group: name),
                              allowsDeviceID: try allowsDeviceID(group: name))
    }

    /// Switches the seed profile on or off for a group, whether or not a
    /// client is in it yet. A bad name is refused (ValidationError) and
    /// nothing is written.
    @discardableResult
    public func setAllowsDeviceID(_ allowed: Bool, group name: String) throws -> NativeSSOGroup {
        try ClientRegistry.validate(clientID: name, what: "native SSO group")
        return try storage.write { tx in
            try tx.nativeSSOGroups.setAllowsDeviceID(allowed, group: name)
            return NativeSSOGroup(name: name, members: try tx.nativeSSOGroups.members(group: name), allowsDeviceID: allowed)
        }
    }
}
