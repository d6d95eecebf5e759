import SSOCore

/// The issuer's public signing keys, by `kid`, as this process last saw
/// them. Single-threaded like the responder that owns it.
///
/// Fetched lazily on first need (every process starts at once, and the
/// issuer may not answer yet), refreshed when older than `maximumAge`,
/// refetched on an unknown kid at most once per `unknownKeyRefetchInterval`,
/// and kept when a refresh fails: an unreachable issuer never stops the
/// validation of tokens signed by keys already known. The last good set is
/// persisted, so a restart does not depend on the issuer either.
public final class JWKSCache {
    private let fetcher: JWKSFetching
    private let store: JWKSPersisting?
    private let policy: JWKSCachePolicy
    private let log: (String) -> Void

    private var keys: [String: any JWSVerificationKey] = [:]
    /// What the held keys are, as bytes: each usable key's kid and public members.
    /// A fetch that finds the same leaves the generation (and so every
    /// verified token) and the saved copy as they are.
    private var heldMembers: Set<[UInt8]> = []
    /// When the held set was fetched (or saved, for a set loaded from the
    /// store); nil while the cache holds no set at all.
    private var heldSince: Int?
    /// After a failed fetch, no other attempt before this time.
    private var nextAttemptAt = Int.min
    private var lastUnknownKeyRefetchAt: Int?
    private var lastFailure = "not fetched yet"

    public init(fetcher: JWKSFetching, store: JWKSPersisting?, policy: JWKSCachePolicy = JWKSCachePolicy(),
                log: @escaping (String) -> Void = { _ in }) {
        self.fetcher = fetcher
        self.store = store
        self.policy = policy
        self.log = log
        if let saved = store?.load() {
            adopt(saved.keySet, at: saved.savedAt)
            log("loaded \(keys.count) signing keys saved at \(saved.savedAt)")
        }
    }

    /// Goes up each time the held set changes, so whatever was verified
    /// under an older set can tell it must be verified again. A refetch
    /// that finds the same keys (one a forged kid may cause each second)
    /// leaves it.
    public private(set) var generation = 0

    /// The kids currently held, sorted (for logs and tests).
    public var keyIDs: [String] { keys.keys.sorted() }

    /// The key for `kid`, fetching or refetching as the policy allows; nil
    /// when the kid is unknown. Throws `SigningKeysUnavailableError` only
    /// while no key set could ever be obtained.
    public func key(for kid: String, now: Int) throws -> (any JWSVerificationKey)? {
        var attempted = false
        if isStale(now: now), now >= nextAttemptAt {
            refresh(now: now)
            attempted = true
        }
        if let key = keys[kid] { return key }
        guard heldSince != nil else {
            throw SigningKeysUnavailableError(retryAfter: policy.retryIntervalWhenEmpty, detail: lastFailure)
        }
        // A kid we do not know may be a key the issuer rotated in since our
        // last fetch (RFC 7517 §4.5: "to choose among a set of keys within a
        // JWK Set during key rollover").
        if !attempted, mayRefetchForUnknownKey(kid, now: now) {
            lastUnknownKeyRefetchAt = now
            unknownKeysTried[kid] = now
            refresh(now: now)
        }
        return keys[kid]
    }

    private func isStale(now: Int) -> Bool {
        guard let heldSince else { return true }
        return now - heldSince >= policy.maximumAge
    }

    /// Unknown kids this process refetched for, with when: a kid is tried at
    /// most once per `unknownKeyRefetchInterval`, and any refetch at most once
    /// per second. Forged kids cost the issuer one request a second at most,
    /// and they can never keep a freshly rotated kid waiting 30 s.
    private var unknownKeysTried: [String: Int] = [:]

    private func mayRefetchForUnknownKey(_ kid: String, now: Int) -> Bool {
        guard now >= nextAttemptAt else { return false }
        if let last = lastUnknownKeyRefetchAt, now - last < 1 { return false }
        unknownKeysTried = unknownKeysTried.filter { now - $0.value < policy.unknownKeyRefetchInterval }
        if unknownKeysTried.count >= 1024 { return false }
        return unknownKeysTried[kid] == nil
    }

    private func refresh(now: Int) {
        let keySet: JWKSet
        do {
            keySet = try fetcher.fetchKeySet()
        } catch {
            Metrics.count(.jwksFetches, "failed")
            lastFailure = "\(error)"
            let wait = heldSince == nil ? policy.retryIntervalWhenEmpty : policy.retryIntervalWhenStale
            nextAttemptAt = now + wait
            log("JWKS fetch failed (\(error)); keeping \(keys.count) known keys, next attempt in \(wait) s")
            return
        }
        Metrics.count(.jwksFetches, "ok")
        let changed = adopt(keySet, at: now)
        nextAttemptAt = Int.min
        guard changed else { return }
        log("JWKS fetched: \(keyIDs.count) signing keys")
        do { try store?.save(keySet) } catch { log("cannot persist JWKS: \(error)") }
    }

    /// Replaces the held keys with the usable ones of `keySet`, and says
    /// whether they differ from those held. A member that is not an RS256
    /// signing key we can build is skipped, not fatal: the rest of the set
    /// still works.
    @discardableResult
    private func adopt(_ keySet: JWKSet, at time: Int) -> Bool {
        heldSince = time
        var usable: [String: any JWSVerificationKey] = [:]
        var members: Set<[UInt8]> = []
        for jwk in keySet.keys {
            // RFC 7517 §4.2: "sig" (signature); RFC 7517 §4.4: "alg" identifies
            // the algorithm intended for use with the key: RSA for RS256, P-256
            // for ES256, Ed25519 for EdDSA (JWK.verificationKey), nothing else.
            guard let kid = jwk.kid, !kid.isEmpty, usable[kid] == nil, jwk.use == nil || jwk.use == "sig",
                  let key = jwk.verificationKey() else { continue }
            usable[kid] = key
            let parts = [kid, jwk.kty, jwk.crv ?? "", jwk.x ?? "", jwk.y ?? "", jwk.n ?? "", jwk.e ?? ""]
            members.insert(Array(parts.joined(separator: " ").utf8))
        }
        guard members != heldMembers || generation == 0 else { return false }
        keys = usable
        heldMembers = members
        generation += 1
        return true
    }
}
