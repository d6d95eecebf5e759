import IssuerStorage
import SSOCore

/// A client's registered public keys, by `kid`: its JWK Set
/// (`--jwks-file`), or the one at its `--jwks-uri`, fetched through the
/// outbound client and cached (ProviderKeys). They verify its client
/// assertions (`private_key_jwt`) and its request objects (RFC 9101).
public final class ClientKeys {
    let remote: ProviderKeys
    /// Registered JWK Sets already read, by the SHA-256 of their text: an
    /// assertion per request need not decode its client's set each time. A
    /// changed registration is another text, so it is read afresh; the
    /// cache is emptied whenever it holds `cachedSetsLimit` sets.
    private var parsedSets: [[UInt8]: [String: ProviderKeys.Member]] = [:]
    static let cachedSetsLimit = 64

    public init(http: any ProviderDocumentFetching, clock: @escaping Clock) {
        // Issue 32: "refetched on an unknown kid at most once a second".
        remote = ProviderKeys(http: http, clock: clock, refetchInterval: 1)
    }

    /// The key `kid` names for `algorithm`; nil when the client has none by
    /// that name (or no keys at all). Throws when its `jwks_uri` cannot be
    /// fetched or read.
    func key(_ client: Client, kid: String, algorithm: JWSAlgorithm) throws -> (any JWSVerificationKey)? {
        if let jwks = client.jwks { return try registered(jwks)[kid]?.verificationKey(for: algorithm) }
        guard let uri = client.jwksURI else { return nil }
        return try remote.key(jwksURI: uri, kid: kid, algorithm: algorithm)
    }

    func registered(_ jwks: String) throws -> [String: ProviderKeys.Member] {
        let digest = SHA256.hash(jwks)
        if let members = parsedSets[digest] { return members }
        let members = try ProviderKeys.members(Array(jwks.utf8))
        if parsedSets.count >= Self.cachedSetsLimit { parsedSets.removeAll() }
        parsedSets[digest] = members
        return members
    }

    /// Whether the client registered keys at all.
    static func has(_ client: Client) -> Bool { client.jwks != nil || client.jwksURI != nil }
}
