/// When a message that met a temporary failure (server down, 4xx, a
/// refused login) is tried again, and when the sender gives up.
///
/// The contract: "the first retries within 30 s, then with backoff for at
/// least an hour". The first two retries come 5 s and 10 s after the
/// failures before them (15 s in all: a relay restarting or a greylisting
/// server's first 4xx costs seconds), then the wait doubles from 30 s
/// up to one hour and stays there. A message is given up once it has been
/// queued for a day, as Keycloak operators' relays (Postfix's
/// `bounce_queue_lifetime`, sendmail's `Timeout.queuereturn`) give up on
/// bounces after days, not minutes: long enough to ride out an outage
/// over a night, short enough that a verification link (valid 24 h) is
/// never delivered dead.
///
///     failure  1     2     3     4     5      6      7      8      9      10 ...
///     wait     5 s   10 s  30 s  1 min 2 min  4 min  8 min  16 min 32 min 1 h, every hour
///     queued   5 s   15 s  45 s  1:45  3:45   7:45   15:45  31:45  63:45  2:03:45 ...
public struct RetrySchedule: Sendable, Equatable {
    /// Waits after the first failures, in seconds; after these, doubling to `maximumWait`.
    public var firstWaits: [Int64] = [5, 10]
    /// The first doubling wait.
    public var backoffStart: Int64 = 30
    public var maximumWait: Int64 = 3600
    /// A message queued longer than this is given up instead of retried.
    public var giveUpAfter: Int64 = 24 * 3600

    public init() {}

    /// The wait after the `failures`-th temporary failure (1 for the first).
    public func wait(afterFailure failures: Int) -> Int64 {
        let index = max(failures, 1) - 1
        if index < firstWaits.count { return firstWaits[index] }
        let doublings = min(index - firstWaits.count, 62)
        var wait = backoffStart
        for _ in 0..<doublings where wait < maximumWait { wait *= 2 }
        return min(wait, maximumWait)
    }

    /// When to try a message again after its `failures`-th temporary
    /// failure at `now`, or nil to give it up (queued at `createdAt`,
    /// longer ago than `giveUpAfter`).
    public func nextAttempt(afterFailure failures: Int, createdAt: Int64, now: Int64) -> Int64? {
        guard now - createdAt < giveUpAfter else { return nil }
        return now + wait(afterFailure: failures)
    }
}
