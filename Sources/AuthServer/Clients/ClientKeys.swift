import IssuerStorage
import SSOCore

/// A client's registered public keys, by `kid`: its JWK Set
/// (`--jwks-file`), or the one at its `--jwks-uri`, fetched through the
/// outbound client and cached (ProviderKeys). They verify its client
/// assertions (`private_key_jwt`) and its request objects (RFC 9101).
public final class ClientKeys {
    let remote: ProviderKeys

    public init(http: any ProviderDocumentFetching, clock: @escaping Clock) {
        // Issue 32: "refetched on an unknown kid at most once a second".
        remote = ProviderKeys(http: http, clock: clock, refetchInterval: 1)
    }

    /// The key `kid` names for `algorithm`; nil when the client has none by
    /// that name (or no keys at all). Throws when its `jwks_uri` cannot be
    /// fetched or read.
    func key(_ client: Client, kid: String, algorithm: JWSAlgorithm) throws -> (any JWSVerificationKey)? {
        if let jwks = client.jwks { return try ProviderKeys.members(Array(jwks.utf8))[kid]?.verificationKey(for: algorithm) }
        guard let uri = client.jwksURI else { return nil }
        return try remote.key(jwksURI: uri, kid: kid, algorithm: algorithm)
    }

    /// Whether the client registered keys at all.
    static func has(_ client: Client) -> Bool { client.jwks != nil || client.jwksURI != nil }
}
