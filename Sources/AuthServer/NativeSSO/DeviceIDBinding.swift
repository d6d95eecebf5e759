import IssuerStorage
import SSOCore

/// When an ID token from the code or refresh grant carries `di_hash`, the
/// seed profile's binding to a device id (DeviceIDParameter).
///
/// Native SSO draft 00–03 (paraphrased): app #1 sends its device id with
/// the token request and the ID token carries its hash, which app #2 later
/// presents with the device id. A device id is not a secret, so Gatehouse
/// binds only a sign-in that asked to take part in Native SSO (the
/// `device_sso` scope, Native SSO §3.1) of a client whose native-SSO group
/// has the seed profile switched on (NativeSSOGroups). Otherwise the
/// `device_id` parameter is accepted (and still checked for shape) but has
/// no effect.
struct DeviceIDBinding {
    let groups: NativeSSOGroups

    /// `di_hash` for `deviceID`, or nil when the grant may not carry one.
    /// `grantedScope` is the sign-in's grant (the code's, the refresh
    /// token's), not a narrowed request.
    func diHash(deviceID: String?, grantedScope: [String], client: Client) throws -> String? {
        guard let deviceID, grantedScope.contains("device_sso"), try groups.allowsDeviceID(group: client.nativeSSOGroup) else {
            return nil
        }
        return NativeSSOHash.of(deviceID)
    }
}
