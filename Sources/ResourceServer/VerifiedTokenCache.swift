import Glibc

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

    private var entries: [TokenText: Entry] = [:]
    /// Bounded, so the cache never costs more than about a megabyte; when
    /// full it starts over rather than track recency per request.
    let capacity: Int

    init(capacity: Int) { self.capacity = capacity }

    func entry(for token: String) -> Entry? { entries[TokenText(token)] }

    /// Whether exactly this text passed every check before (and so the RFC
    /// 6750 §2.1 b64token syntax too: a syntax scan of it can be skipped).
    func contains(_ token: String) -> Bool { entries[TokenText(token)] != nil }

    func insert(_ entry: Entry, for token: String) {
        guard capacity > 0 else { return }
        if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
        entries[TokenText(token)] = entry
    }

    func remove(_ token: String) { entries[TokenText(token)] = nil }

    var count: Int { entries.count }
}

/// A token's text as a dictionary key, compared in full, byte for byte, but
/// hashed on its length and last 32 bytes only: a JWS ends in its signature,
/// so that tail already tells tokens apart, and hashing the whole kilobyte
/// cost more than the rest of a cache hit. Only verified tokens are stored,
/// and the hasher is seeded per process, so nobody can fill one bucket.
struct TokenText: Hashable {
    let text: String

    init(_ text: String) { self.text = text }

    static let hashedTail = 32

    func hash(into hasher: inout Hasher) {
        var text = text
        text.withUTF8 { bytes in
            hasher.combine(bytes.count)
            hasher.combine(bytes: UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes.suffix(Self.hashedTail))))
        }
    }

    static func == (left: TokenText, right: TokenText) -> Bool {
        var (left, right) = (left.text, right.text)
        return left.withUTF8 { a in right.withUTF8 { b in a.count == b.count && (a.isEmpty || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0) } }
    }
}
