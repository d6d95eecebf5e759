import IssuerStorage
/// How a user authenticated: the `amr` values (RFC 8176 §2) a session and its
/// codes record, and the `acr` (OIDC Core §2) that follows from them.
public enum AuthenticationMethods {
    /// RFC 8176 §2: "pwd: Password-based authentication".
    public static let password = "pwd"
    /// RFC 8176 §2: "otp: One-time password", here TOTP (RFC 6238).
    public static let oneTimePassword = "otp"

    /// RFC 8176 §2: "hwk: Proof-of-Possession (PoP) of a hardware-secured
    /// key", a passkey bound to its device.
    public static let hardwareKey = "hwk"
    /// RFC 8176 §2: "swk: Proof-of-Possession (PoP) of a software-secured
    /// key", a synced passkey (its key leaves the device, to the user's
    /// other devices).
    public static let softwareKey = "swk"
    /// RFC 8176 §2: "mfa: Multiple-factor authentication": a passkey's key
    /// and the user verification (biometric or PIN) it required.
    public static let multiFactor = "mfa"

    public static let passwordOnly = [password]
    public static let passwordAndTOTP = [password, oneTimePassword]
    /// A recovery code is no RFC 4226/6238 one-time password, so not "otp";
    /// with the password it is still two factors (RFC 8176 §2 "mfa").
    public static let passwordAndRecoveryCode = [password, multiFactor]

    /// OIDC Core §2 acr: "an absolute URI or an RFC 6711 registered name";
    /// private URNs name the two levels this issuer has. A password sign-in
    /// says so too, rather than omitting acr, so a client can always compare.
    public static let passwordACR = "urn:gatehouse:pwd"
    public static let multiFactorACR = "urn:gatehouse:mfa"

    /// The level a session's methods reach; nil for a sign-in through an
    /// upstream provider that named no method (nothing to say honestly).
    public static func acr(for amr: [String]) -> String? {
        let methods = methods(amr)
        if methods.isEmpty { return nil }
        return (methods.contains(oneTimePassword) && methods.contains(password)) || methods.contains(multiFactor) ? multiFactorACR : passwordACR
    }

    /// A sign-in through an upstream provider records the provider's name
    /// beside the methods, as one more stored value with this prefix (no
    /// RFC 8176 value has a colon), so the session, its codes and its
    /// refresh tokens carry it wherever they carry `amr`, and the ID token
    /// says `idp` (IDTokenClaims).
    static let providerPrefix = "idp:"

    /// The methods the provider named (RFC 8176 values only) and its name.
    public static func federated(provider: String, upstream: [String]) -> [String] { upstream + [providerPrefix + provider] }

    /// The provider a session was signed in through, if any.
    public static func identityProvider(in amr: [String]) -> String? {
        amr.first { $0.hasPrefix(providerPrefix) }.map { String($0.dropFirst(providerPrefix.count)) }
    }

    /// The `amr` values proper, without the provider's name.
    public static func methods(_ amr: [String]) -> [String] { amr.filter { !$0.hasPrefix(providerPrefix) } }

    /// The stored form: space-separated, as `scope` is.
    static func encode(_ amr: [String]) -> String { amr.joined(separator: " ") }

    static func decode(_ stored: String) -> [String] {
        let values = stored.split(separator: " ").map(String.init)
        return values.isEmpty ? passwordOnly : values
    }
}
