import Dispatch
import Glibc

/// The pace of a sweep's batches. After a full batch (more may follow) the
/// sweep rests three times as long as that batch took, so a backlog, such
/// as a million codes that expired during an outage, takes at most a
/// quarter of the database's write time. On SQLite a batch holds the only
/// write lock: back-to-back batches cut the refresh grant to 0.22 of its
/// rate for the whole sweep (measured after `Scripts/bench --scale`'s
/// fill), resting as long as each batch to 0.36.
public struct SweepPacing {
    let startedAt = DispatchTime.now().uptimeNanoseconds

    public init() {}

    /// Call when a batch removed `count` of at most `batch` rows.
    public func rest(afterRemoving count: Int, of batch: Int) {
        guard count >= batch else { return }
        let elapsedMicroseconds = (DispatchTime.now().uptimeNanoseconds - startedAt) / 1000
        usleep(useconds_t(min(max(3 * elapsedMicroseconds, 100), 1_000_000)))
    }
}
