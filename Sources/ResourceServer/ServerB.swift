import FoundationEssentials
import Glibc
import SQLiteClient
import SSOCore

/// Resource server B: `GET /api/records` for tokens whose audience is its
/// origin and whose scope holds `api:serverB`.
public enum ServerB {
    public static let endpoint = "api-b"
    public static let path = "/api/records"
    public static let requiredScope = "api:serverB"

    struct Payload: Encodable {
        let records: [ServerBRecordStore.Record]
        let source: String
    }

    /// Everything built once per process: configuration, database and its
    /// prepared statement, JWKS cache, DPoP replay cache (and nonce key).
    public static func makeResponder(config: GatehouseConfig, environment: [String: String]) throws -> ProtectedAPIResponder {
        let store = try ServerBRecordStore(database: SQLiteDatabase(path: config.resourceServerDatabasePath))
        let keys = ResourceServerSetup.jwksCache(config: config, environment: environment, endpoint: endpoint)
        let policy = policy(config: config)
        return responder(policy: policy, keys: keys, store: store,
                         dpop: try ResourceServerSetup.dpopGuard(config: config, policy: policy, path: path))
    }

    public static func policy(config: GatehouseConfig) -> AccessTokenPolicy {
        AccessTokenPolicy(issuer: config.issuer, audience: config.apiBOrigin, requiredScope: requiredScope)
    }

    /// The records are the rows of the token's `email` (none without one).
    public static func responder(policy: AccessTokenPolicy, keys: JWKSCache, store: ServerBRecordStore, dpop: DPoPResourceGuard,
                                 clock: @escaping () -> Int = { Int(time(nil)) }) -> ProtectedAPIResponder {
        // Keyed by the email's bytes (as ServerA's BodyKey, not by `String`,
        // whose equality is Unicode's); no bytes stand for a token without one.
        let bodies = EncodedBodyCache<[UInt8]>(version: store.dataVersion)
        return ProtectedAPIResponder(path: path, validator: AccessTokenValidator(policy: policy, keys: keys), dpop: dpop,
                                     clock: clock) { claims in
            let body = try bodies.body(for: Array((claims.email ?? "").utf8)) {
                let records = try claims.email.map { try store.records(forEmail: $0) } ?? []
                return try JSON.encode(Payload(records: records, source: "ServerB"))
            }
            return Response(status: 200, headers: [("Content-Type", "application/json")], body: body)
        }
    }
}
