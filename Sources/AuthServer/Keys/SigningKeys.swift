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
    /// RS256, ES256 or EdDSA: each algorithm's keys rotate on their own.
    public let algorithm: JWSAlgorithm
    public let publicPEM: String
    public let createdAt: Int64
    public let activatesAt: Int64
    public let retiredAt: Int64?
}

public struct KeyStoreError: Error, CustomStringConvertible {
    public let description: String
}

/// The issuer's signing keys: states, rotation, retirement, for each of
/// the algorithms it signs with (RS256, ES256, EdDSA), each with its own
/// active key and its own phased rotation. RS256 is what every client gets
/// unless registered with another `--id-token-alg`.
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

    /// The keys the JWKS publishes: the active ones first (RS256's leading),
    /// then the next and the superseded ones whose tokens may still be alive.
    public func publishedKeys() throws -> [SigningKeyRecord] {
        let order: [SigningKeyRecord.State: Int] = [.active: 0, .next: 1, .published: 2]
        func rank(_ record: SigningKeyRecord) -> (Int, Int) {
            (order[record.state]!, IssuerSigningKey.algorithms.firstIndex(of: record.algorithm) ?? 0)
        }
        return try all().filter { order[$0.state] != nil }.sorted { rank($0) < rank($1) }
    }

    public func activeKID(algorithm: JWSAlgorithm = .rs256) throws -> String? {
        try all().first { $0.state == .active && $0.algorithm == algorithm }?.kid
    }

    /// The algorithms that have an active key now.
    public func activeAlgorithms() throws -> [JWSAlgorithm] {
        let active = Set(try all().filter { $0.state == .active }.map(\.algorithm))
        return IssuerSigningKey.algorithms.filter(active.contains)
    }

    /// When the signing key will next change by itself (a pending key's
    /// activation), so caches know when to look again.
    public func nextActivation() throws -> Int64? {
        try all().filter { $0.state == .next }.map(\.activatesAt).min()
    }

    /// The active private key of `algorithm`.
    public func activeSigningKey(algorithm: JWSAlgorithm = .rs256) throws -> (kid: String, key: IssuerSigningKey) {
        guard let kid = try activeKID(algorithm: algorithm) else {
            let option = algorithm == .rs256 ? "" : " --alg \(algorithm.rawValue)"
            throw KeyStoreError(description: "no active \(algorithm.rawValue) signing key; run ssoctl keys rotate\(option)")
        }
        guard let pem = try storage.read.signingKeys.privateKeyPEM(kid: kid) else {
            throw KeyStoreError(description: "the private key of \(kid) is missing")
        }
        return (kid, try IssuerSigningKey.load(pem: pem, algorithm: algorithm))
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

    /// Adds a new key of `algorithm`, published at once, signing after
    /// `activationDelay` seconds (0: at once, only for a first key of its
    /// algorithm, which nothing has seen).
    @discardableResult
    public func rotate(activationDelay: Int = 0, algorithm: JWSAlgorithm = .rs256) throws -> String {
        let key = try IssuerSigningKey.generate(algorithm)
        let kid = try key.thumbprint()
        let now = clock()
        let stored = StoredSigningKey(kid: kid, publicPEM: String(decoding: try key.publicKeyPEM(), as: UTF8.self), createdAt: now,
                                      activatesAt: now + Int64(max(0, activationDelay)), algorithm: algorithm.rawValue)
        let privatePEM = try key.privateKeyPEM()
        try storage.write { try $0.signingKeys.insert(stored, privateKeyPEM: privatePEM) }
        return kid
    }

    /// Withdraws a key: out of the JWKS, private key deleted, so tokens it
    /// signed stop verifying once verifiers refresh. The active key cannot be
    /// retired while no other key can take over: rotate first.
    public func retire(kid: String) throws {
        guard let record = try all().first(where: { $0.kid.bytesEqual(kid) }) else { throw ValidationError.notFound("no key with kid \(kid)") }
        switch record.state {
        case .active: throw ValidationError.conflict("\(kid) is the active key; rotate first, then retire it")
        case .retired: throw ValidationError.conflict("\(kid) is already retired")
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

    /// States from times, for each algorithm apart: keys come newest
    /// activation first, so the first activated, unretired one of an
    /// algorithm is its active key and each later one was superseded when
    /// the key before it in the list activated. A row of an algorithm the
    /// issuer does not sign with is left out.
    func records(_ keys: [StoredSigningKey], now: Int64) -> [SigningKeyRecord] {
        var supersededAt: [JWSAlgorithm: Int64] = [:]
        return keys.compactMap { key in
            guard let algorithm = JWSAlgorithm(rawValue: key.algorithm), IssuerSigningKey.algorithms.contains(algorithm) else { return nil }
            let state: SigningKeyRecord.State
            if key.retiredAt != nil {
                state = .retired
            } else if key.activatesAt > now {
                state = .next
            } else if let superseded = supersededAt[algorithm] {
                state = now - superseded > tokenLifetime ? .expired : .published
            } else {
                state = .active
            }
            if key.retiredAt == nil, key.activatesAt <= now { supersededAt[algorithm] = key.activatesAt }
            return SigningKeyRecord(kid: key.kid, state: state, algorithm: algorithm, publicPEM: key.publicPEM, createdAt: key.createdAt,
                                    activatesAt: key.activatesAt, retiredAt: key.retiredAt)
        }
    }
}
