/// The login throttle's numbers, all in one place (README "Login throttling").
///
/// Per account (the lower-cased email, known or not, so a lock never tells
/// whether an account exists): 5 failures within 15 minutes lock it for
/// 1 minute; every further failure after a lock doubles the delay, up to
/// 1 hour. Per client address: the same shape at 20 failures, so one
/// attacker behind a shared NAT address does not lock out everyone else
/// there before the per-account limit stops them. A lock is forgotten 15
/// minutes after it ends; a success resets the account's count.
public struct LoginThrottlePolicy: Equatable, Sendable {
    /// Failures within `window` that lock; at least 2 (the first failure never locks).
    public let maximumFailures: Int
    /// Seconds over which failures are counted.
    public let window: Int
    /// The first lock, in seconds; each failure after it doubles the lock.
    public let firstLockDuration: Int
    public let longestLockDuration: Int

    public init(maximumFailures: Int, window: Int, firstLockDuration: Int, longestLockDuration: Int) {
        precondition(maximumFailures >= 2 && window > 0 && firstLockDuration > 0 && longestLockDuration >= firstLockDuration)
        self.maximumFailures = maximumFailures
        self.window = window
        self.firstLockDuration = firstLockDuration
        self.longestLockDuration = longestLockDuration
    }

    public static let perAccount = LoginThrottlePolicy(maximumFailures: 5, window: 15 * 60, firstLockDuration: 60,
                                                       longestLockDuration: 60 * 60)
    public static let perAddress = LoginThrottlePolicy(maximumFailures: 20, window: 15 * 60, firstLockDuration: 60,
                                                       longestLockDuration: 60 * 60)

    /// How long the `failures`-th failure locks for (nil: it does not lock).
    public func lockDuration(afterFailures failures: Int) -> Int? {
        guard failures >= maximumFailures else { return nil }
        let doublings = min(failures - maximumFailures, 20)
        return min(firstLockDuration << doublings, longestLockDuration)
    }
}
