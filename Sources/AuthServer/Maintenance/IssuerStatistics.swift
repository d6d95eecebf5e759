/// What `ssoctl stats` reports: how much the issuer holds, at one moment.
/// Encoded (snake_case) for `--json`.
public struct IssuerStatistics: Equatable, Sendable, Encodable {
    public struct Users: Equatable, Sendable, Encodable {
        public var total: Int64
        public var disabled: Int64
    }

    public struct Clients: Equatable, Sendable, Encodable {
        public var total: Int64
        public var confidential: Int64
    }

    public struct RefreshTokens: Equatable, Sendable, Encodable {
        /// Unexpired, not revoked and not yet rotated: the tokens apps hold.
        public var live: Int64
        /// Every row, spent and revoked ones included, until the sweeper removes them.
        public var stored: Int64
    }

    /// The login throttle's counters. Failed sign-ins are not stored one by
    /// one with a time: the throttle keeps, per account and per client
    /// address (both hashed, indistinguishable), a failure count and the
    /// start of its 15-minute window, and forgets a window soon after it ends.
    public struct LoginThrottleCounters: Equatable, Sendable, Encodable {
        /// Counters whose window started within the last hour and that hold failures.
        public var counters: Int64
        /// Their failures: each failed sign-in counts once on its account's
        /// counter and once on its address's; a success takes its attempt back.
        public var failures: Int64
        /// Counters locked now (accounts or addresses refused until the lock ends).
        public var locked: Int64
    }

    public var users: Users
    public var clients: Clients
    /// Not ended, not expired, user not disabled.
    public var liveSSOSessions: Int64
    public var refreshTokens: RefreshTokens
    /// Issued, not yet exchanged, not expired.
    public var outstandingAuthorizationCodes: Int64
    /// Access tokens revoked (RFC 7009) that would otherwise still be valid.
    public var revokedAccessTokens: Int64
    /// Every state (next, active, published, expired, retired), zeros included.
    public var signingKeys: [String: Int64]
    /// Native SSO device secrets: not revoked, not expired.
    public var liveDeviceSecrets: Int64
    public var loginThrottle: LoginThrottleCounters
    /// The database file, and its write-ahead log beside it.
    public var databaseBytes: Int64
    public var walBytes: Int64

    enum CodingKeys: String, CodingKey {
        case users, clients
        case liveSSOSessions = "live_sso_sessions"
        case refreshTokens = "refresh_tokens"
        case outstandingAuthorizationCodes = "outstanding_authorization_codes"
        case revokedAccessTokens = "revoked_access_tokens"
        case signingKeys = "signing_keys"
        case liveDeviceSecrets = "live_device_secrets"
        case loginThrottle = "login_throttle"
        case databaseBytes = "database_bytes"
        case walBytes = "wal_bytes"
    }
}
