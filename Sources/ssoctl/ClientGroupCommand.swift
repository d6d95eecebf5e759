import ArgumentParser
import AuthServer
import IssuerStorage

/// `ssoctl client group NAME [--allow-device-id | --no-allow-device-id]`.
struct ClientGroupCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "group",
        abstract: "Show a native SSO group (its clients and settings), or switch its device_id profile on or off.",
        discussion: """
            A native SSO group is the set of clients registered with the same --native-sso-group; they share \
            sign-in on a device (OpenID Connect Native SSO). The device_secret profile always works for a group. \
            The seed device_id profile (di_hash in ID tokens, device ids as actor tokens) is off unless switched on \
            here, because a device id is not a secret; the demo group has it on. Both need the device_sso scope in \
            app #1's sign-in. Running responders see a change at their next request.

            A group may be set up before its first client: `ssoctl client group acme --allow-device-id` works with no \
            client in acme yet, and the clients added later with --native-sso-group acme get the setting. Showing a \
            group no client names lists no members and its settings (the defaults unless set here).
            """)

    @Argument(help: "The group's name.") var name: String
    @Flag(inversion: .prefixedNo, exclusivity: .exclusive, help: "Switch the device_id profile on (or off with --no-allow-device-id).") var allowDeviceID: Bool?

    func run() throws {
        let context = try Context.open()
        let groups = context.services.nativeSSOGroups
        let group = attempt {
            if let allowDeviceID { try groups.setAllowsDeviceID(allowDeviceID, group: name) } else { try groups.group(named: name) }
        }
        // Without a flag the command only shows the group.
        if let allowDeviceID {
            AdminAudit.changed(allowDeviceID ? "client group allow-device-id" : "client group no-allow-device-id", target: group.name)
        }
        print("group: \(group.name)")
        print("members: " + (group.members.isEmpty ? "(none yet: clients join with --native-sso-group \(group.name))"
                                                   : group.members.joined(separator: " ")))
        print("device_id profile: \(group.allowsDeviceID ? "on" : "off")")
    }
}
