import IssuerStorage
import SSOCore

/// One signing key with its state now.
public struct SigningKeyRecord: Equatable, Sendable {
    /// Derived from the times, never stored: a key moves through them as the
    /// clock runs, with no command needed.
    public enum State: String, Sendable {
        /// Published, signs from `activatesAt` (pre-publication).
        case next
        /// Signs new tokens.
        case active
        /// Superseded, still published while tokens it signed may be alive.
        case published
        /// Superseded long enough ago that every token it signed has expired.
        case expired
        /// Withdrawn by `ssoctl keys retire`; its private key is deleted.
        case retired
    }
    public let kid: String
    public let state: State
    public let publicPEM: String
    public let createdAt: Int64
    public let activatesAt: Int64
    public let retiredAt: Int64?
}

public struct KeyStoreError: Error, CustomStringConvertible {
    public let description: String
}

/// The issuer's RS256 signing keys: states, rotation, retirement.
///
/// Rotation publishes a key before it signs: `rotate(activationDelay:)`
/// adds it to the JWKS at once and it becomes the signing key when
/// `activates_at` arrives, so every verifier has had the chance to fetch it
/// first. The key it replaces stays published until every token it signed
/// has expired (`tokenLifetime` after it was superseded). Where the private
/// keys live is the storage backend's (SigningKeyReads.privateKeyPEM).
public final class SigningKeys {
    let storage: any IssuerStorage
    let clock: Clock
    /// How long a superseded key must stay published: the longest lifetime
    /// of a token it may have signed, plus clock leeway.
    let tokenLifetime: Int64

    public init(storage: any IssuerStorage, clock: @escaping Clock = systemClock, tokenLifetime: Int = 3660) {
        self.storage = storage
        self.clock = clock
        self.tokenLifetime = Int64(tokenLifetime)
    }

    /// Every key, newest activation first, with its state now.
    public func all() throws -> [SigningKeyRecord] {
        records(try storage.read.signingKeys.all(), now: clock())
    }

    /// The keys the JWKS publishes: the active one first, then the next and
    /// the superseded ones whose tokens may still be alive.
    public func publishedKeys() throws -> [SigningKeyRecord] {
        let order: [SigningKeyRecord.State: Int] = [.active: 0, .next: 1, .published: 2]
        return try all().filter { order[$0.state] != nil }.sorted { order[$0.state]! < order[$1.state]! }
    }

    public func activeKID() throws -> String? {
        try all().first { $0.state == .active }?.kid
    }

    /// When the signing key will next change by itself (a pending key's
    /// activation), so caches know when to look again.
    public func nextActivation() throws -> Int64? {
        try all().filter { $0.state == .next }.map(\.activatesAt).min()
    }

    /// The active private key.
    public func activeSigningKey() throws -> (kid: String, key: RSAKey) {
        guard let kid = try activeKID() else { throw KeyStoreError(description: "no active signing key; run ssoctl keys rotate") }
        guard let pem = try storage.read.signingKeys.privateKeyPEM(kid: kid) else {
            throw KeyStoreError(description: "the private key of \(kid) is missing")
        }
        return (kid, try RSAKey.privateKey(pem: pem))
    }

    /// The shortest wait between publishing a key and signing with it, even
    /// in an emergency (`ssoctl keys rotate --now`): nginx answers the JWKS
    /// from a copy refreshed every 2 seconds and seen a second later
    /// (deploy/nginx/snippets/gatehouse-wellknown-cache.conf, checked by
    /// KeyRotationTests), so a key shows within 3 s; one more second
    /// because activation times are whole seconds. A relying party that
    /// refetches the JWKS on an unknown kid without `Cache-Control:
    /// no-cache` gets nginx's copy, and must find the key there.
    public static let minimumActivationDelay = 4

    /// Adds a new key, published at once, signing after `activationDelay`
    /// seconds (0: at once, only for a first key, which nothing has seen).
    @discardableResult
    public func rotate(activationDelay: Int = 0) throws -> String {
        let key = try RSAKey.generate(bits: 2048)
        let kid = try JWK.thumbprint(of: key)
        let now = clock()
        let stored = StoredSigningKey(kid: kid, publicPEM: String(decoding: try key.publicKeyPEM(), as: UTF8.self), createdAt: now,
                                      activatesAt: now + Int64(max(0, activationDelay)))
        let privatePEM = try key.privateKeyPEM()
        try storage.write { try $0.signingKeys.insert(stored, privateKeyPEM: privatePEM) }
        return kid
    }

    /// Withdraws a key: out of the JWKS, private key deleted, so tokens it
    /// signed stop verifying once verifiers refresh. The active key cannot be
    /// retired while no other key can take over: rotate first.
    public func retire(kid: String) throws {
        guard let record = try all().first(where: { $0.kid.bytesEqual(kid) }) else { throw KeyStoreError(description: "no key with kid \(kid)") }
        switch record.state {
        case .active: throw KeyStoreError(description: "\(kid) is the active key; rotate first, then retire it")
        case .retired: throw KeyStoreError(description: "\(kid) is already retired")
        default: break
        }
        try storage.write { try $0.signingKeys.retire(kid: record.kid, at: clock()) }
    }

    /// How many keys are in each state now (`ssoctl stats`).
    public func countsByState() throws -> [String: Int64] {
        let states: [SigningKeyRecord.State] = [.next, .active, .published, .expired, .retired]
        var counts = Dictionary(uniqueKeysWithValues: states.map { ($0.rawValue, Int64(0)) })
        for key in try all() { counts[key.state.rawValue, default: 0] += 1 }
        return counts
    }

    /// States from times: keys come newest activation first, so the first
    /// activated, unretired one is the active key and each later one was
    /// superseded when the key before it in the list activated.
    func records(_ keys: [StoredSigningKey], now: Int64) -> [SigningKeyRecord] {
        var supersededAt: Int64?
        return keys.map { key in
            let state: SigningKeyRecord.State
            if key.retiredAt != nil {
                state = .retired
            } else if key.activatesAt > now {
                state = .next
            } else if let superseded = supersededAt {
                state = now - superseded > tokenLifetime ? .expired : .published
            } else {
                state = .active
            }
            if key.retiredAt == nil, key.activatesAt <= now { supersededAt = key.activatesAt }
            return SigningKeyRecord(kid: key.kid, state: state, publicPEM: key.publicPEM, createdAt: key.createdAt,
                                    activatesAt: key.activatesAt, retiredAt: key.retiredAt)
        }
    }
}
