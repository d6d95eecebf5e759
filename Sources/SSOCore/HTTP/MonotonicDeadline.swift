import Dispatch

/// A point on the monotonic clock after which a wait is abandoned. Not the
/// wall clock: a clock step (NTP, a suspended laptop) must neither cut an
/// exchange short nor let it run on.
public struct MonotonicDeadline: Sendable {
    let uptimeNanoseconds: UInt64

    public init(seconds: Double) {
        uptimeNanoseconds = DispatchTime.now().uptimeNanoseconds + UInt64(max(0, seconds) * 1e9)
    }

    /// 0 once the deadline has passed.
    public var remainingSeconds: Double {
        let now = DispatchTime.now().uptimeNanoseconds
        return now >= uptimeNanoseconds ? 0 : Double(uptimeNanoseconds - now) / 1e9
    }

    public init(milliseconds: Int) { self.init(seconds: Double(milliseconds) / 1000) }

    /// 0 once the deadline has passed, rounded up otherwise.
    public var remainingMilliseconds: Int { Int((remainingSeconds * 1000).rounded(.up)) }

    /// Milliseconds on the monotonic clock, for backoffs.
    public static func nowMilliseconds() -> Int64 { Int64(DispatchTime.now().uptimeNanoseconds / 1_000_000) }
}
