import FoundationEssentials
import Glibc
import IssuerStorage
import SSOCore

/// A sign-in attempt the throttle let through and counted; settle it with
/// `succeeded` or `passedFirstFactor` once the credential is checked (a
/// failure needs nothing more: it was counted on admission).
public struct LoginAttempt: Equatable, Sendable {
    let accountKey: [UInt8]
    let addressKey: [UInt8]
}

/// Whose failures an attempt counts against. A known account is keyed by
/// its stored id, never by the text typed: every spelling that finds the
/// account (any ASCII case, as the lookup folds it) shares one counter, and
/// no spelling can get a counter of its own and still sign in (the outside
/// review's NUL-byte lock bypass). An unknown email gets a counter of its
/// own, so a lock still never tells whether an account exists.
public enum LoginAccount: Equatable, Sendable {
    case user(id: Int64)
    case unknown(email: String)
}

/// What the throttle said about an attempt.
public enum LoginAdmission: Equatable, Sendable {
    case admitted(LoginAttempt)
    /// Locked: nothing was counted and no password may be checked.
    /// `retryAfter` is the seconds until the lock that refused it ends.
    case locked(retryAfter: Int, by: LockedKey)

    public enum LockedKey: String, Sendable { case account, address }
}

/// Failed sign-ins per account and per client address, in the issuer's
/// storage so every login process (and node) shares them (numbers:
/// LoginThrottlePolicy).
///
/// An attempt is counted *before* its password is checked, by one atomic
/// statement that also says whether the key was locked
/// (LoginThrottleStore.reserve): a burst of parallel guesses gets at most
/// `maximumFailures` password checks, never one per request. A success
/// gives its attempt back. While locked, the password is not checked at
/// all, so a locked account never tells whether a guess was right.
public final class LoginThrottle {
    let storage: any IssuerStorage
    let clock: Clock
    let accountPolicy: LoginThrottlePolicy
    let addressPolicy: LoginThrottlePolicy

    public init(storage: any IssuerStorage, clock: @escaping Clock = systemClock,
                accountPolicy: LoginThrottlePolicy = .perAccount, addressPolicy: LoginThrottlePolicy = .perAddress) {
        self.storage = storage
        self.clock = clock
        self.accountPolicy = accountPolicy
        self.addressPolicy = addressPolicy
    }

    /// Counts an attempt on `account` from `address`, unless either is
    /// locked (then nothing is counted). Runs its own write unit.
    public func admit(_ account: LoginAccount, address: String) throws -> LoginAdmission {
        let attempt = LoginAttempt(accountKey: Self.accountKey(account), addressKey: Self.addressKey(address))
        let now = clock()
        return try storage.write { tx in
            // Rows that would start over anyway are deleted (unknown emails
            // would otherwise pile up).
            try tx.loginThrottle.sweep(horizon: now - Int64(max(accountPolicy.window, addressPolicy.window)))
            if let lockedUntil = try tx.loginThrottle.reserve(key: attempt.addressKey, policy: addressPolicy, now: now) {
                return .locked(retryAfter: Int(lockedUntil - now), by: .address)
            }
            if let lockedUntil = try tx.loginThrottle.reserve(key: attempt.accountKey, policy: accountPolicy, now: now) {
                // A locked account checks no password, so the address loses nothing.
                try tx.loginThrottle.refund(key: attempt.addressKey, policy: addressPolicy, now: now)
                return .locked(retryAfter: Int(lockedUntil - now), by: .account)
            }
            return .admitted(attempt)
        }
    }

    /// The whole sign-in succeeded: the account starts afresh; the address
    /// gets this attempt back (its other failures stand). In the login's
    /// completion write unit. The address row first, then the account's,
    /// as `admit` takes them: on PostgreSQL the opposite order could
    /// deadlock with a concurrent attempt (a double submit).
    public func succeeded(_ attempt: LoginAttempt, _ tx: any IssuerWrites) throws {
        try tx.loginThrottle.refund(key: attempt.addressKey, policy: addressPolicy, now: clock())
        try tx.loginThrottle.reset(key: attempt.accountKey)
    }

    /// The password was right and a second factor follows: both counters get
    /// this attempt back, but the account's earlier failures stand, so wrong
    /// TOTP codes after right passwords still add up to a lock.
    public func passedFirstFactor(_ attempt: LoginAttempt) throws {
        let now = clock()
        try storage.write { tx in
            // Address first, as in `admit` (see `succeeded`).
            try tx.loginThrottle.refund(key: attempt.addressKey, policy: addressPolicy, now: now)
            try tx.loginThrottle.refund(key: attempt.accountKey, policy: accountPolicy, now: now)
        }
    }

    /// Whether `account` is locked now (for tests and ssoctl).
    public func isLocked(_ account: LoginAccount) throws -> Bool {
        try storage.read.loginThrottle.lockedUntil(key: Self.accountKey(account), now: clock()) != nil
    }

    /// Forgets the counter of the stored account `userID` (the one every
    /// spelling of its address shares): its lock, and the failures towards
    /// one, in the caller's write unit. Per-address counters stay: they
    /// count what one client did to every account. Returns when the lock
    /// ended, if it was locked at `now`.
    @discardableResult
    public static func forgetAccount(userID: Int64, _ tx: any IssuerWrites, now: Int64) throws -> Int64? {
        let key = accountKey(.user(id: userID))
        let lockedUntil = try tx.loginThrottle.lockedUntil(key: key, now: now)
        try tx.loginThrottle.reset(key: key)
        return lockedUntil
    }

    // MARK: Keys

    /// The account key: the stored account's id, or, for an unknown email,
    /// the email with ASCII letters lower-cased (EmailKey), the same folding
    /// as the user lookup, so spellings the lookup treats as one address
    /// share a counter.
    static func accountKey(_ account: LoginAccount) -> [UInt8] {
        switch account {
        case .user(let id): SHA256.hash("account\u{0}user\u{0}\(id)")
        case .unknown(let email): SHA256.hash("account\u{0}email\u{0}" + EmailKey.of(email))
        }
    }

    /// The address key. An IPv6 client is keyed by its /64, the smallest
    /// block a site is usually given, so cycling through the addresses of
    /// one prefix does not reset the count; an IPv4-mapped address counts
    /// as the IPv4 address it is.
    static func addressKey(_ address: String) -> [UInt8] { SHA256.hash("address\u{0}" + addressBlock(address)) }

    static func addressBlock(_ address: String) -> String {
        var ipv6 = in6_addr()
        guard address.contains(":"), inet_pton(AF_INET6, address, &ipv6) == 1 else { return address }
        let bytes = withUnsafeBytes(of: &ipv6) { Array($0) }
        if bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xff, bytes[11] == 0xff {
            return bytes[12...].map(String.init).joined(separator: ".")
        }
        let digits = Array("0123456789abcdef")
        return String(bytes[0..<8].flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0f)]] }) + "::/64"
    }
}
