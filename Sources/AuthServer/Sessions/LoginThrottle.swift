import FoundationEssentials
import Glibc
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

/// Failed sign-ins per account and per client address, in SQLite so every
/// login process shares them (numbers: LoginThrottlePolicy).
///
/// An attempt is counted *before* its password is checked, by one
/// `INSERT … ON CONFLICT DO UPDATE … RETURNING` that also says whether the
/// key was locked: concurrent attempts are serialized by SQLite's write
/// lock, so a burst of parallel guesses gets at most `maximumFailures`
/// password checks, never one per request. A success gives its attempt
/// back. While locked, the password is not checked at all, so a locked
/// account never tells whether a guess was right.
public final class LoginThrottle {
    let database: SQLiteDatabase
    let clock: Clock
    let accountPolicy: LoginThrottlePolicy
    let addressPolicy: LoginThrottlePolicy

    public init(database: SQLiteDatabase, clock: @escaping Clock = systemClock,
                accountPolicy: LoginThrottlePolicy = .perAccount, addressPolicy: LoginThrottlePolicy = .perAddress) {
        self.database = database
        self.clock = clock
        self.accountPolicy = accountPolicy
        self.addressPolicy = addressPolicy
    }

    /// Counts an attempt on `account` from `address`, unless either is
    /// locked (then nothing is counted). Runs its own transaction.
    public func admit(_ account: LoginAccount, address: String) throws -> LoginAdmission {
        let attempt = LoginAttempt(accountKey: Self.accountKey(account), addressKey: Self.addressKey(address))
        let now = clock()
        return try database.transaction {
            try sweep(now: now)
            if let lockedUntil = try reserve(attempt.addressKey, addressPolicy, now: now) {
                return .locked(retryAfter: Int(lockedUntil - now), by: .address)
            }
            if let lockedUntil = try reserve(attempt.accountKey, accountPolicy, now: now) {
                // A locked account checks no password, so the address loses nothing.
                try refund(attempt.addressKey, addressPolicy)
                return .locked(retryAfter: Int(lockedUntil - now), by: .account)
            }
            return .admitted(attempt)
        }
    }

    /// The whole sign-in succeeded: the account starts afresh; the address
    /// gets this attempt back (its other failures stand). No transaction of
    /// its own: the login's completion runs it inside its own.
    public func succeeded(_ attempt: LoginAttempt) throws {
        try database.execute("DELETE FROM login_throttle WHERE key_hash = ?", [.blob(attempt.accountKey)])
        try refund(attempt.addressKey, addressPolicy)
    }

    /// The password was right and a second factor follows: both counters get
    /// this attempt back, but the account's earlier failures stand, so wrong
    /// TOTP codes after right passwords still add up to a lock.
    public func passedFirstFactor(_ attempt: LoginAttempt) throws {
        try refund(attempt.accountKey, accountPolicy)
        try refund(attempt.addressKey, addressPolicy)
    }

    /// Whether `account` is locked now (for tests and ssoctl).
    public func isLocked(_ account: LoginAccount) throws -> Bool {
        try database.queryOne("SELECT 1 FROM login_throttle WHERE key_hash = ? AND locked_until > ?",
                              [.blob(Self.accountKey(account)), .integer(clock())]) != nil
    }

    // MARK: Counting

    /// Counts one attempt on `key` unless it is locked; returns nil when the
    /// attempt may go on, else when the lock that refused it ends. A window older than `window`, with no lock ended
    /// within `window` either, starts over. Reaching `maximumFailures`
    /// locks; each failure after that locks twice as long, up to the cap.
    /// (In the DO UPDATE clause every column name is the row's old value.)
    private func reserve(_ key: [UInt8], _ policy: LoginThrottlePolicy, now: Int64) throws -> Int64? {
        let row = try database.queryOne("""
            INSERT INTO login_throttle (key_hash, failures, window_started_at, locked_until, admitted) VALUES (?1, 1, ?2, 0, 1)
            ON CONFLICT (key_hash) DO UPDATE SET
                admitted = locked_until <= ?2,
                failures = CASE WHEN locked_until > ?2 THEN failures
                                WHEN window_started_at <= ?2 - ?4 AND locked_until <= ?2 - ?4 THEN 1
                                ELSE failures + 1 END,
                window_started_at = CASE WHEN window_started_at <= ?2 - ?4 AND locked_until <= ?2 - ?4 THEN ?2
                                         ELSE window_started_at END,
                locked_until = CASE WHEN locked_until > ?2 THEN locked_until
                                    WHEN window_started_at <= ?2 - ?4 AND locked_until <= ?2 - ?4 THEN 0
                                    WHEN failures + 1 >= ?3 THEN ?2 + MIN(?5 << MIN(failures + 1 - ?3, 20), ?6)
                                    ELSE locked_until END
            RETURNING admitted, locked_until
            """, [.blob(key), .integer(now), .integer(Int64(policy.maximumFailures)), .integer(Int64(policy.window)),
                  .integer(Int64(policy.firstLockDuration)), .integer(Int64(policy.longestLockDuration))])
        guard let row, row.int(0) != 1 else { return nil }
        return row.int(1)
    }

    /// Gives back one counted attempt. Below the limit again means the lock
    /// was the one this attempt set, so it goes too; an escalated lock stays.
    private func refund(_ key: [UInt8], _ policy: LoginThrottlePolicy) throws {
        try database.execute("""
            UPDATE login_throttle SET failures = failures - 1,
                locked_until = CASE WHEN failures - 1 < ?2 THEN 0 ELSE locked_until END
            WHERE key_hash = ?1 AND failures > 0
            """, [.blob(key), .integer(Int64(policy.maximumFailures))])
    }

    /// Rows that would start over anyway are deleted (unknown emails would
    /// otherwise pile up). Indexed on window_started_at.
    private func sweep(now: Int64) throws {
        let horizon = now - Int64(max(accountPolicy.window, addressPolicy.window))
        try database.execute("DELETE FROM login_throttle WHERE window_started_at <= ? AND locked_until <= ?",
                             [.integer(horizon), .integer(horizon)])
    }

    // MARK: Keys

    /// The account key: the stored account's id, or, for an unknown email,
    /// the email with ASCII letters lower-cased, the same folding as the
    /// users table's `COLLATE NOCASE` lookup, so spellings the lookup treats
    /// as one address share a counter.
    static func accountKey(_ account: LoginAccount) -> [UInt8] {
        switch account {
        case .user(let id): SHA256.hash("account\u{0}user\u{0}\(id)")
        case .unknown(let email): SHA256.hash("account\u{0}email\u{0}" + asciiLowercased(email))
        }
    }

    static func asciiLowercased(_ text: String) -> String {
        String(decoding: text.utf8.map { (0x41...0x5A).contains($0) ? $0 | 0x20 : $0 }, as: UTF8.self)
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
