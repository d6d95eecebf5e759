import FoundationEssentials
import SSOCore

/// Signing keys published at a JWKS URL, by URL and `kid`, as this process
/// last fetched them (single-threaded like the responder that owns it):
/// upstream providers' ID-token keys, and clients' keys for
/// `private_key_jwt` (`--jwks-uri`). A set is refetched when an hour old,
/// and on an unknown `kid` at most once per `refetchInterval` per URL, so
/// a forged `kid` cannot turn each request into a request to the key's
/// owner; a failed refetch keeps the keys already held.
public final class ProviderKeys {
    public static let maximumAge: Int64 = 3_600
    /// Upstream providers' interval.
    public static let unknownKeyRefetchInterval: Int64 = 10

    let http: any ProviderDocumentFetching
    let clock: Clock
    /// Ten seconds for upstream providers; a second for clients (issue:
    /// "refetched on an unknown kid at most once a second").
    let refetchInterval: Int64
    private var sets: [String: (fetchedAt: Int64, members: [String: Member])] = [:]
    private var lastRefetch: [String: Int64] = [:]

    public init(http: any ProviderDocumentFetching, clock: @escaping Clock, refetchInterval: Int64 = ProviderKeys.unknownKeyRefetchInterval) {
        self.http = http
        self.clock = clock
        self.refetchInterval = refetchInterval
    }

    /// The key `kid` names in the set at `jwksURI`, for the algorithm its
    /// type implies (RSA: RS256, EC: ES256); nil when the set, even after
    /// the refetch the policy allows, has none by that name.
    public func key(jwksURI: String, kid: String) throws -> (any JWSVerificationKey)? {
        try member(jwksURI: jwksURI, kid: kid)?.verificationKey()
    }

    /// The key `kid` names, built for `algorithm` (nil when it is not a key
    /// for that algorithm: RFC 8725 §3.1, one key, one algorithm).
    public func key(jwksURI: String, kid: String, algorithm: JWSAlgorithm) throws -> (any JWSVerificationKey)? {
        try member(jwksURI: jwksURI, kid: kid)?.verificationKey(for: algorithm)
    }

    func member(jwksURI: String, kid: String) throws -> Member? {
        let now = clock()
        if let held = sets[jwksURI], now - held.fetchedAt < Self.maximumAge, let member = held.members[kid] { return member }
        if let last = lastRefetch[jwksURI], now - last < refetchInterval {
            guard let held = sets[jwksURI] else { throw ProviderRequestError(detail: "the JWKS at \(jwksURI) could not be read moments ago") }
            return held.members[kid]
        }
        lastRefetch[jwksURI] = now
        do {
            let (status, body) = try http.get(jwksURI)
            guard status == 200 else { throw ProviderRequestError(detail: "\(jwksURI) answered \(status)") }
            sets[jwksURI] = (now, try Self.members(body))
        } catch {
            // Keys already held still verify what they signed.
            guard sets[jwksURI] != nil else { throw ProviderRequestError(detail: "the JWKS at \(jwksURI) could not be read: \(error)") }
        }
        return sets[jwksURI]?.members[kid]
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
        /// A private key's members (RFC 7518 §6.2.2, §6.3.2; RFC 8037 §2):
        /// read only to refuse a registered set that holds one.
        let d: String?

        /// The algorithm its type implies for an upstream provider (RS256
        /// for RSA, ES256 for EC).
        var impliedAlgorithm: JWSAlgorithm? {
            switch kty {
            case "RSA": .rs256
            case "EC": .es256
            default: nil
            }
        }

        func verificationKey() -> (any JWSVerificationKey)? { impliedAlgorithm.flatMap(verificationKey(for:)) }

        /// A signing key (`use` absent or `sig`) whose `alg`, when given,
        /// is `algorithm` (RFC 7517 §4.2, §4.4), built as a DPoP proof's key
        /// is (ProofJWK.verificationKey: kty and crv fit the algorithm, RSA
        /// at most 4096 bits); nil for anything else.
        func verificationKey(for algorithm: JWSAlgorithm) -> (any JWSVerificationKey)? {
            guard use == nil || use == "sig", alg == nil || alg == algorithm.rawValue else { return nil }
            return try? ProofJWK(kty: kty ?? "", crv: crv, x: x, y: y, n: n, e: e).verificationKey(for: algorithm)
        }
    }

    struct KeySet: Decodable { let keys: [Member] }

    /// The members of a JWK Set that have a `kid`, by `kid` (the first of
    /// a repeated one); which of them is a key for an algorithm is decided
    /// when one is asked for. Encryption keys and types Gatehouse has no use
    /// for stay in, unused: never fatal.
    static func members(_ body: [UInt8]) throws -> [String: Member] {
        guard let set = try? JSONDecoder().decode(KeySet.self, from: Data(body)) else {
            throw ProviderRequestError(detail: "not a JWK Set")
        }
        var members: [String: Member] = [:]
        for member in set.keys {
            guard let kid = member.kid, !kid.isEmpty, members[kid] == nil else { continue }
            members[kid] = member
        }
        return members
    }

    /// The members that are keys for the algorithm their type implies (an
    /// upstream provider's RS256 and ES256 keys), by `kid`.
    static func parse(_ body: [UInt8]) throws -> [String: any JWSVerificationKey] {
        try members(body).compactMapValues { $0.verificationKey() }
    }
}

/// A request to an upstream provider (its JWKS, its token endpoint) that
/// did not give what the sign-in needs.
struct ProviderRequestError: Error, CustomStringConvertible {
    let detail: String
    var description: String { detail }
}
