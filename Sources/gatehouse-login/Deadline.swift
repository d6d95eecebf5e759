import Dispatch

/// A point on the monotonic clock after which an exchange is abandoned.
struct Deadline {
    let uptimeNanoseconds: UInt64

    init(seconds: Double) {
        uptimeNanoseconds = DispatchTime.now().uptimeNanoseconds + UInt64(max(0, seconds) * 1e9)
    }

    var remainingSeconds: Double {
        let now = DispatchTime.now().uptimeNanoseconds
        return now >= uptimeNanoseconds ? 0 : Double(uptimeNanoseconds - now) / 1e9
    }

    /// The time left; throws once there is none.
    func remaining() throws -> Double {
        let left = remainingSeconds
        guard left > 0 else { throw ToolError("timed out") }
        return left
    }
}
