import IssuerStorage
import SSOCore

/// The active signing key, loaded once and looked up again only when another
/// process may have committed (IssuerStorage.changeMarker) or a pre-published key's
/// activation time has come: `ssoctl keys rotate` takes effect without a
/// restart, while a steady state costs one marker read per token.
public final class ActiveSigningKeyCache {
    let keys: SigningKeys
    private var version: Int64?
    private var recheckAt: Int64 = .max
    /// The active key of each algorithm asked for so far.
    private var current: [JWSAlgorithm: (kid: String, key: IssuerSigningKey)] = [:]

    public init(keys: SigningKeys) { self.keys = keys }

    public func signingKey(algorithm: JWSAlgorithm = .rs256) throws -> (kid: String, key: IssuerSigningKey) {
        let now = try keys.storage.changeMarker()
        if now != version || keys.clock() >= recheckAt {
            // Something may have changed: each algorithm's active kid is
            // looked up again, and its key reloaded only if it moved.
            let records = try keys.all()
            recheckAt = records.filter { $0.state == .next }.map(\.activatesAt).min() ?? .max
            version = now
            current = current.filter { entry in records.contains { $0.state == .active && $0.kid == entry.value.kid } }
        }
        if let cached = current[algorithm] { return cached }
        let loaded = try keys.activeSigningKey(algorithm: algorithm)
        current[algorithm] = loaded
        return loaded
    }
}
