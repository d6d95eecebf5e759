/// Response bodies already JSON-encoded, by key (the token's user), kept
/// until any process commits to the shared SQLite file.
///
/// Foundation's JSONEncoder is the largest cost of a validated API call once
/// the token is known; the rows behind a body only change with a commit,
/// which `PRAGMA data_version` reveals for the price of one pragma read (the
/// same test the JWKS responder uses).
final class EncodedBodyCache<Key: Hashable> {
    private let currentVersion: () throws -> Int64
    private var version: Int64?
    private var bodies: [Key: [UInt8]] = [:]
    /// Bounded; when full it starts over.
    let capacity: Int

    init(capacity: Int = 256, version: @escaping () throws -> Int64) {
        self.capacity = capacity
        self.currentVersion = version
    }

    func body(for key: Key, encode: () throws -> [UInt8]) throws -> [UInt8] {
        let now = try currentVersion()
        if now != version {
            bodies.removeAll(keepingCapacity: true)
            version = now
        }
        if let body = bodies[key] { return body }
        let body = try encode()
        if bodies.count >= capacity { bodies.removeAll(keepingCapacity: true) }
        bodies[key] = body
        return body
    }
}
