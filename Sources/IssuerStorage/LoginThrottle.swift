/// The numbers of one throttle counter: `maximumFailures` within `window`
/// seconds lock for `firstLockDuration`; each failure after that locks
/// twice as long, up to `longestLockDuration`.
public struct ThrottlePolicy: Equatable, Sendable {
    /// At least 2 (the first failure never locks).
    public let maximumFailures: Int
    public let window: Int
    public let firstLockDuration: Int
    public let longestLockDuration: Int

    public init(maximumFailures: Int, window: Int, firstLockDuration: Int, longestLockDuration: Int) {
        precondition(maximumFailures >= 2 && window > 0 && firstLockDuration > 0 && longestLockDuration >= firstLockDuration)
        self.maximumFailures = maximumFailures
        self.window = window
        self.firstLockDuration = firstLockDuration
        self.longestLockDuration = longestLockDuration
    }

    /// How long the `failures`-th failure locks for (nil: it does not lock).
    public func lockDuration(afterFailures failures: Int) -> Int? {
        guard failures >= maximumFailures else { return nil }
        let doublings = min(failures - maximumFailures, 20)
        return min(firstLockDuration << doublings, longestLockDuration)
    }
}

/// Failure counters by key (a SHA-256 of what is counted: never an email or
/// an address in clear), shared by every login process and node.
public protocol LoginThrottleReads {
    /// When the lock on `key` ends, if it is locked at `now`.
    func lockedUntil(key: [UInt8], now: Int64) throws -> Int64?
}

public protocol LoginThrottleStore: LoginThrottleReads {
    /// Counts one attempt on `key` unless it is locked, in one atomic
    /// statement: nil when the attempt may go on (and was counted), else
    /// when the lock that refused it ends (nothing counted). A window older
    /// than `policy.window`, with no lock ended within it either, starts
    /// over. Of concurrent callers no more than `maximumFailures` are
    /// admitted before the lock.
    func reserve(key: [UInt8], policy: ThrottlePolicy, now: Int64) throws -> Int64?
    /// Gives back one counted attempt, and the lock its reservation set:
    /// an attempt is admitted only while no lock holds, so a lock still
    /// holding at `now` is the one this attempt's own count set (below the
    /// limit again, or at a doubled lock after an earlier one ended). It
    /// ends at `now`; the failures before it stand, so the next failure
    /// locks as it would have.
    func refund(key: [UInt8], policy: ThrottlePolicy, now: Int64) throws
    /// Forgets the counter (a success on the account).
    func reset(key: [UInt8]) throws
    /// Deletes counters whose window and lock both ended at or before `horizon`.
    func sweep(horizon: Int64) throws
}
