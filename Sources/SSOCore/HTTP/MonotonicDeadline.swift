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
}
