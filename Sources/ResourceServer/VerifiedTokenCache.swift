/// Access tokens this process has already verified, by their exact text, so
/// an app calling the API with the same token again costs a dictionary
/// lookup instead of a base64 decode, two JSON decodes and an RSA verify
/// (the idea of Envoy jwt_authn's `jwt_cache_config`).
///
/// Only fully verified tokens enter. A hit is trusted only while the JWKS
/// generation it was verified under is current and its kid still published;
/// the time window is re-checked on every hit by the validator.
final class VerifiedTokenCache {
    struct Entry {
        let claims: AccessTokenClaims
        let kid: String
        let keySetGeneration: Int
    }

    private var entries: [String: Entry] = [:]
    /// Bounded, so the cache never costs more than about a megabyte; when
    /// full it starts over rather than track recency per request.
    let capacity: Int

    init(capacity: Int) { self.capacity = capacity }

    func entry(for token: String) -> Entry? { entries[token] }

    func insert(_ entry: Entry, for token: String) {
        guard capacity > 0 else { return }
        if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
        entries[token] = entry
    }

    func remove(_ token: String) { entries[token] = nil }

    var count: Int { entries.count }
}
