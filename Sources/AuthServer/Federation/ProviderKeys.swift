import FoundationEssentials
import SSOCore

/// Upstream providers' ID-token signing keys, by JWKS URL and `kid`, as
/// this process last fetched them (single-threaded like the responder that
/// owns it). A set is refetched when an hour old, and on an unknown `kid`
/// at most once every ten seconds per provider, so a forged `kid` cannot
/// turn each callback into a request to the provider; a failed refetch
/// keeps the keys already held.
public final class ProviderKeys {
    public static let maximumAge: Int64 = 3_600
    public static let unknownKeyRefetchInterval: Int64 = 10

    let http: any ProviderDocumentFetching
    let clock: Clock
    private var sets: [String: (fetchedAt: Int64, keys: [String: any JWSVerificationKey])] = [:]
    private var lastRefetch: [String: Int64] = [:]

    public init(http: any ProviderDocumentFetching, clock: @escaping Clock) {
        self.http = http
        self.clock = clock
    }

    /// The key `kid` names in the set at `jwksURI`; nil when the set, even
    /// after the refetch the policy allows, has none by that name.
    public func key(jwksURI: String, kid: String) throws -> (any JWSVerificationKey)? {
        let now = clock()
        if let held = sets[jwksURI], now - held.fetchedAt < Self.maximumAge, let key = held.keys[kid] { return key }
        if let last = lastRefetch[jwksURI], now - last < Self.unknownKeyRefetchInterval {
            guard let held = sets[jwksURI] else { throw ProviderRequestError(detail: "the provider's JWKS could not be read moments ago") }
            return held.keys[kid]
        }
        lastRefetch[jwksURI] = now
        do {
            let (status, body) = try http.get(jwksURI)
            guard status == 200 else { throw ProviderRequestError(detail: "\(jwksURI) answered \(status)") }
            sets[jwksURI] = (now, try Self.parse(body))
        } catch {
            // Keys already held still verify what they signed.
            guard sets[jwksURI] != nil else { throw ProviderRequestError(detail: "the provider's JWKS could not be read: \(error)") }
        }
        return sets[jwksURI]?.keys[kid]
    }

    /// One member of a JWK Set (RFC 7517 §4), as far as the issuer reads it.
    struct Member: Decodable {
        let kty: String?
        let kid: String?
        let use: String?
        let alg: String?
        let n: String?
        let e: String?
        let crv: String?
        let x: String?
        let y: String?

        /// The algorithm its type verifies (RS256 for RSA, ES256 for EC),
        /// when `alg` is absent or names that one; nil for any other key.
        var algorithm: JWSAlgorithm? {
            switch kty {
            case "RSA" where alg == nil || alg == "RS256": .rs256
            case "EC" where alg == nil || alg == "ES256": .es256
            default: nil
            }
        }
    }

    struct KeySet: Decodable { let keys: [Member] }

    /// The usable signing keys of a JWK Set: RSA (RS256) and P-256 (ES256)
    /// keys with a `kid`, `use` absent or `sig`, `alg` absent or matching
    /// the key's type (RFC 7517 §4.2, §4.4), each built as a DPoP proof's
    /// key is (ProofJWK.verificationKey: RSA at most 4096 bits). Others are
    /// skipped, not fatal: providers publish encryption keys and algorithms
    /// Gatehouse has no use for.
    static func parse(_ body: [UInt8]) throws -> [String: any JWSVerificationKey] {
        guard let set = try? JSONDecoder().decode(KeySet.self, from: Data(body)) else {
            throw ProviderRequestError(detail: "the provider's JWKS is not a JWK Set")
        }
        var keys: [String: any JWSVerificationKey] = [:]
        for member in set.keys {
            guard let kid = member.kid, !kid.isEmpty, member.use == nil || member.use == "sig", let algorithm = member.algorithm,
                  let key = try? ProofJWK(kty: member.kty ?? "", crv: member.crv, x: member.x, y: member.y, n: member.n, e: member.e)
                      .verificationKey(for: algorithm) else { continue }
            keys[kid] = key
        }
        return keys
    }
}

/// A request to an upstream provider (its JWKS, its token endpoint) that
/// did not give what the sign-in needs.
struct ProviderRequestError: Error, CustomStringConvertible {
    let detail: String
    var description: String { detail }
}
