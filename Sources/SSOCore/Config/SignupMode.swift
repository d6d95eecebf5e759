/// `GATEHOUSE_SIGNUP`: who may make an account on their own. Read at start
/// (a change needs a restart, as every setting does).
public enum SignupMode: String, Sendable, CaseIterable {
    /// Only an administrator makes accounts (`ssoctl user add`, `ssoctl
    /// user invite`); the login page offers no sign-up. The default.
    case closed
    /// As `closed`: accounts come from invitations (`ssoctl user invite`)
    /// or an administrator; named apart so a deployment says what it means.
    case invite
    /// Anyone may sign up on the login page's "Create an account".
    case open

    /// Unset or empty: closed. Anything else but the three names is refused
    /// at start rather than read as one of them.
    public static func parse(_ value: String?) throws -> SignupMode {
        guard let value, !value.isEmpty else { return .closed }
        guard let mode = SignupMode(rawValue: value.lowercased()) else {
            throw ConfigError("GATEHOUSE_SIGNUP must be closed, invite or open, got \(value.prefix(32))")
        }
        return mode
    }
}
