import SSOCore

/// The active signing key, loaded once and looked up again only when another
/// process has committed (PRAGMA data_version) or a pre-published key's
/// activation time has come: `ssoctl keys rotate` takes effect without a
/// restart, while a steady state costs one pragma read per token.
public final class ActiveSigningKeyCache {
    let keys: SigningKeyStore
    private var version: Int64?
    private var recheckAt: Int64 = .max
    private var current: (kid: String, key: RSAKey)?

    public init(keys: SigningKeyStore) { self.keys = keys }

    public func signingKey() throws -> (kid: String, key: RSAKey) {
        let now = try keys.database.dataVersion()
        if let current, now == version, keys.clock() < recheckAt { return current }
        let kid = try keys.activeKID()
        recheckAt = try keys.nextActivation() ?? .max
        version = now
        if let current, current.kid == kid { return current }
        let loaded = try keys.activeSigningKey()
        current = loaded
        return loaded
    }
}
