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
    private var current: (kid: String, key: RSAKey)?

    public init(keys: SigningKeys) { self.keys = keys }

    public func signingKey() throws -> (kid: String, key: RSAKey) {
        let now = try keys.storage.changeMarker()
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
