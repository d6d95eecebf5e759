import IssuerStorage
import SSOCore

/// The issuer's own public keys by kid, for verifying tokens it signed,
/// offline and in-process: the published ones (what the JWKS serves:
/// active, next, and superseded ones whose tokens may still be alive) and,
/// on request, the expired ones too.
///
/// Loaded once, then re-read when another process may have committed
/// (IssuerStorage.changeMarker: `ssoctl keys rotate|retire` takes effect without a
/// restart) or every 10 s at most, because key states follow the clock
/// (SigningKeys.records). PEMs are parsed only for kids not seen
/// before. An unknown kid also re-reads the (tiny) key list: a key added
/// through this very connection does not move the marker, and the read
/// parses nothing new for a made-up kid.
public final class PublishedSigningKeyCache {
    static let recheckInterval: Int64 = 10

    let store: SigningKeys
    private var version: Int64?
    private var loadedAt: Int64 = .min
    private var entries: [String: (key: any JWSVerificationKey, state: SigningKeyRecord.State)] = [:]

    public init(store: SigningKeys) { self.store = store }

    /// The key for `kid` if it is published now; with `acceptingExpired`,
    /// also if it was superseded long enough ago that it left the JWKS
    /// (never when it was retired: a withdrawn key proves nothing).
    public func key(kid: String, acceptingExpired: Bool = false) throws -> (any JWSVerificationKey)? {
        let currentVersion = try store.storage.changeMarker()
        let now = store.clock()
        if currentVersion != version || now - loadedAt >= Self.recheckInterval || now < loadedAt {
            try reload(now: now)
            version = currentVersion
        }
        if entries[kid] == nil { try reload(now: now) }
        guard let entry = entries[kid] else { return nil }
        switch entry.state {
        case .active, .next, .published: return entry.key
        case .expired: return acceptingExpired ? entry.key : nil
        case .retired: return nil
        }
    }

    private func reload(now: Int64) throws {
        var fresh: [String: (key: any JWSVerificationKey, state: SigningKeyRecord.State)] = [:]
        for record in try store.all() where record.state != .retired {
            if let cached = entries[record.kid] {
                fresh[record.kid] = (cached.key, record.state)
            } else if let key = try? IssuerPublicKey.verificationKey(pem: Array(record.publicPEM.utf8), algorithm: record.algorithm) {
                // A row whose PEM does not load verifies nothing; the others still work.
                fresh[record.kid] = (key, record.state)
            }
        }
        entries = fresh
        loadedAt = now
    }
}
