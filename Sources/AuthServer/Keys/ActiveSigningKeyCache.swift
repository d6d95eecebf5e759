import SSOCore

/// The active signing key, loaded once and reloaded only when the database
/// says another process has committed (PRAGMA data_version) and the active
/// kid has changed: `ssoctl keys rotate` takes effect without a restart,
/// while a steady state costs one pragma read per token.
public final class ActiveSigningKeyCache {
    let keys: SigningKeyStore
    private var version: Int64?
    private var current: (kid: String, key: RSAKey)?

    public init(keys: SigningKeyStore) { self.keys = keys }

    public func signingKey() throws -> (kid: String, key: RSAKey) {
        let now = try keys.database.dataVersion()
        if let current, now == version { return current }
        let kid = try keys.activeKID()
        if let current, current.kid == kid {
            version = now
            return current
        }
        let loaded = try keys.activeSigningKey()
        current = loaded
        version = now
        return loaded
    }
}
