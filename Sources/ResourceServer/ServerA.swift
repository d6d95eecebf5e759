import FoundationEssentials
import Glibc
import SQLiteClient
import SSOCore

/// Resource server A: `GET /api/data` for tokens whose audience is its
/// origin and whose scope holds `api:serverA`.
public enum ServerA {
    public static let endpoint = "api-a"
    public static let path = "/api/data"
    public static let requiredScope = "api:serverA"

    struct Payload: Encodable {
        let data: [ServerAItemStore.Item]
        let user: String
        let source: String
    }

    /// Everything built once per process: configuration, database and its
    /// prepared statement, JWKS cache, DPoP replay cache (and nonce key).
    public static func makeResponder(config: GatehouseConfig, environment: [String: String]) throws -> ProtectedAPIResponder {
        let store = try ServerAItemStore(database: SQLiteDatabase(path: config.resourceServerDatabasePath))
        let keys = ResourceServerSetup.jwksCache(config: config, environment: environment, endpoint: endpoint)
        let policy = policy(config: config)
        return responder(policy: policy, keys: keys, store: store,
                         dpop: try ResourceServerSetup.dpopGuard(config: config, policy: policy, path: path))
    }

    public static func policy(config: GatehouseConfig) -> AccessTokenPolicy {
        AccessTokenPolicy(issuer: config.issuer, audience: config.apiAOrigin, requiredScope: requiredScope)
    }

    /// What a body depends on: the rows of an email, or none for a token
    /// without one (then `user` is its subject).
    ///
    /// By bytes: Swift's `String` equality is Unicode's canonical
    /// equivalence, so "é" as one scalar and "e" with a combining accent
    /// would share a key (and one user get the other's body), while the
    /// issuer and the database tell them apart byte by byte.
    enum BodyKey: Hashable {
        case email([UInt8])
        case subject([UInt8])
    }

    /// `user` is the token's `email` (its `sub` when the token has none);
    /// the items are the rows of that email.
    public static func responder(policy: AccessTokenPolicy, keys: JWKSCache, store: ServerAItemStore, dpop: DPoPResourceGuard,
                                 clock: @escaping () -> Int = { Int(time(nil)) }) -> ProtectedAPIResponder {
        let bodies = EncodedBodyCache<BodyKey>(version: store.dataVersion)
        return ProtectedAPIResponder(path: path, validator: AccessTokenValidator(policy: policy, keys: keys), dpop: dpop,
                                     clock: clock) { claims in
            let key = claims.email.map { BodyKey.email(Array($0.utf8)) } ?? .subject(Array(claims.subject.utf8))
            let body = try bodies.body(for: key) {
                let items = try claims.email.map { try store.items(forEmail: $0) } ?? []
                return try JSON.encode(Payload(data: items, user: claims.email ?? claims.subject, source: "ServerA"))
            }
            return Response(status: 200, headers: [("Content-Type", "application/json")], body: body)
        }
    }
}
