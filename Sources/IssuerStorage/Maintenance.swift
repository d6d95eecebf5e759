/// How long what the sweeper deletes may still matter.
public struct SweepPolicy: Equatable, Sendable {
    public let now: Int64
    /// Used codes are kept while the tokens they issued may live (a proven
    /// replay still revokes them): the refresh token lifetime.
    public let refreshTokenLifetime: Int64
    /// Spent refresh tokens keep their sealed successor this long.
    public let refreshGracePeriod: Int64
    /// Revoked access tokens are kept until their exp plus this leeway.
    public let accessTokenLeeway: Int64
    /// Ended or expired sessions stay this long for `ssoctl sessions list`.
    public let endedSessionRetention: Int64
    /// Delivered mail stays this long (a week: "was it sent?").
    public let sentMailRetention: Int64
    /// Mail that failed for good stays longer, for the person who asks
    /// why a message never came.
    public let failedMailRetention: Int64
    /// A sign-up never verified is removed this long after it was made,
    /// once no link of it is live: the address is free again for its real
    /// owner's sign-up, and an abandoned row does not stay forever.
    public let unverifiedSignUpRetention: Int64

    public init(now: Int64, refreshTokenLifetime: Int64, refreshGracePeriod: Int64, accessTokenLeeway: Int64 = 60,
                endedSessionRetention: Int64 = 86_400, sentMailRetention: Int64 = 7 * 86_400, failedMailRetention: Int64 = 30 * 86_400,
                unverifiedSignUpRetention: Int64 = 7 * 86_400) {
        self.now = now
        self.refreshTokenLifetime = refreshTokenLifetime
        self.refreshGracePeriod = refreshGracePeriod
        self.accessTokenLeeway = accessTokenLeeway
        self.endedSessionRetention = endedSessionRetention
        self.sentMailRetention = sentMailRetention
        self.failedMailRetention = failedMailRetention
        self.unverifiedSignUpRetention = unverifiedSignUpRetention
    }
}

/// One line of `ssoctl doctor`.
public struct DoctorFinding: Equatable, Sendable, Encodable {
    public enum Status: String, Sendable, Encodable { case ok, warn, fail }

    public let status: Status
    public let check: String
    public let detail: String

    public init(_ status: Status, _ check: String, _ detail: String) {
        self.status = status
        self.check = check
        self.detail = detail
    }

    public var line: String { "\(status.rawValue)  \(check)  \(detail)" }
}

extension DoctorFinding.Status: Comparable {
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rank < rhs.rank }
    private var rank: Int { switch self { case .ok: 0; case .warn: 1; case .fail: 2 } }
}

/// What only the backend knows how to do or check.
public protocol StorageMaintenance {
    /// Where the data is, for people: a file path, or the URL without its
    /// password.
    var location: String { get }
    /// Deletes what can no longer be used, `batch` rows per short
    /// transaction (a sweep never makes a sign-in wait long); counts by kind.
    func sweep(_ policy: SweepPolicy, batch: Int) throws -> [String: Int]
    /// Counts for `ssoctl stats`, all from one snapshot.
    func statistics(now: Int64) throws -> IssuerStatistics
    /// The backend's own health checks for `ssoctl doctor` (reachable,
    /// schema version, integrity, journal or replication, size), never
    /// throwing; `quick` skips what reads every page.
    func diagnose(quick: Bool) -> [DoctorFinding]
    /// Writes, in a transaction of its own, that `node` found itself ready
    /// at `now` (one row per node): `/health/ready`'s proof that the
    /// database takes writes. Throws what the write threw.
    func recordReadinessProbe(node: String, now: Int64) throws
}

/// Counts for `ssoctl stats`.
public struct IssuerStatistics: Equatable, Sendable, Encodable {
    public struct Users: Equatable, Sendable, Encodable {
        public var total: Int64
        public var disabled: Int64
        public init(total: Int64, disabled: Int64) { self.total = total; self.disabled = disabled }
    }

    public struct Clients: Equatable, Sendable, Encodable {
        public var total: Int64
        public var confidential: Int64
        public init(total: Int64, confidential: Int64) { self.total = total; self.confidential = confidential }
    }

    public struct RefreshTokens: Equatable, Sendable, Encodable {
        /// Unused, unrevoked, unexpired.
        public var live: Int64
        /// Every row, spent and revoked ones included.
        public var stored: Int64
        public init(live: Int64, stored: Int64) { self.live = live; self.stored = stored }
    }

    public struct LoginThrottleCounters: Equatable, Sendable, Encodable {
        /// Counters with failures in the last hour.
        public var counters: Int64
        public var failures: Int64
        /// Counters locked now.
        public var locked: Int64
        public init(counters: Int64, failures: Int64, locked: Int64) { self.counters = counters; self.failures = failures; self.locked = locked }
    }

    public var users: Users
    /// Registered passkeys (WebAuthn credentials), every user's.
    public var passkeys: Int64
    public var clients: Clients
    public var liveSSOSessions: Int64
    public var refreshTokens: RefreshTokens
    public var outstandingAuthorizationCodes: Int64
    public var revokedAccessTokens: Int64
    /// Stored keys by kind of row: the issuer derives states (SigningKeys).
    public var signingKeys: [String: Int64]
    public var liveDeviceSecrets: Int64
    public var loginThrottle: LoginThrottleCounters
    public var databaseBytes: Int64
    public var walBytes: Int64

    public init(users: Users, passkeys: Int64, clients: Clients, liveSSOSessions: Int64, refreshTokens: RefreshTokens,
                outstandingAuthorizationCodes: Int64, revokedAccessTokens: Int64, signingKeys: [String: Int64], liveDeviceSecrets: Int64, loginThrottle: LoginThrottleCounters,
                databaseBytes: Int64, walBytes: Int64) {
        self.users = users
        self.passkeys = passkeys
        self.clients = clients
        self.liveSSOSessions = liveSSOSessions
        self.refreshTokens = refreshTokens
        self.outstandingAuthorizationCodes = outstandingAuthorizationCodes
        self.revokedAccessTokens = revokedAccessTokens
        self.signingKeys = signingKeys
        self.liveDeviceSecrets = liveDeviceSecrets
        self.loginThrottle = loginThrottle
        self.databaseBytes = databaseBytes
        self.walBytes = walBytes
    }

    enum CodingKeys: String, CodingKey {
        case users, passkeys, clients
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
