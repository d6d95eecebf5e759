import IssuerStorage
import SSOCore

/// The seed profile's `device_id` token request parameter (Native SSO
/// draft 00–03 §3.3: the app sends the device's identifier with the code
/// exchange; the ID token then carries `di_hash`). Optional on every
/// request; app #2 presents the same value as its actor_token.
public enum DeviceIDParameter {
    /// `di_hash` is defined over the ASCII device id, so only visible ASCII
    /// is accepted, and at most 256 characters (a UUID or a platform id fits).
    public static func parse(_ form: FormParameters) throws -> String? {
        guard let deviceID = try form.single("device_id") else { return nil }
        guard deviceID.utf8.count <= 256, deviceID.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw OAuthError.invalidRequest("device_id must be 1 to 256 visible ASCII characters")
        }
        return deviceID
    }
}
