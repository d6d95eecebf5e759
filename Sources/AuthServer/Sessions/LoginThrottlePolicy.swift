import IssuerStorage

/// The login throttle's numbers, all in one place (README "Login throttling").
///
/// Per account (the lower-cased email, known or not, so a lock never tells
/// whether an account exists): 5 failures within 15 minutes lock it for
/// 1 minute; every further failure after a lock doubles the delay, up to
/// 1 hour. Per client address: the same shape at 20 failures, so one
/// attacker behind a shared NAT address does not lock out everyone else
/// there before the per-account limit stops them. A lock is forgotten 15
/// minutes after it ends; a success resets the account's count.
public typealias LoginThrottlePolicy = ThrottlePolicy

extension ThrottlePolicy {
    public static let perAccount = ThrottlePolicy(maximumFailures: 5, window: 15 * 60, firstLockDuration: 60, longestLockDuration: 60 * 60)
    public static let perAddress = ThrottlePolicy(maximumFailures: 20, window: 15 * 60, firstLockDuration: 60, longestLockDuration: 60 * 60)
}
