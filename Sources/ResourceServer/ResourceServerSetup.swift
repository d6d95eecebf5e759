import FoundationEssentials
import SQLiteClient
import SSOCore

/// What both resource servers build once at process start from the
/// configuration: where the JWKS comes from, whom to trust for its TLS
/// certificate, and where the last good set is kept.
public enum ResourceServerSetup {
    /// The trust anchor for the issuer's TLS certificate:
    /// `$GATEHOUSE_CA_FILE` if set, else the home's local CA if it exists,
    /// else the system's CAs (a deployment with a public certificate).
    public static func caFile(home: String, environment: [String: String]) -> String? {
        if let explicit = environment["GATEHOUSE_CA_FILE"], !explicit.isEmpty { return explicit }
        let local = home + "/tls/ca.pem"
        return FileManager.default.fileExists(atPath: local) ? local : nil
    }

    public static func jwksURL(config: GatehouseConfig) -> String { config.issuer + "/.well-known/jwks.json" }

    public static func jwksCachePath(config: GatehouseConfig) -> String { config.home + "/cache/jwks.json" }

    /// The DPoP replay cache every api-a and api-b process of this host
    /// shares: a file of its own beside the APIs' data (see
    /// `SQLiteDPoPReplayCache` for why not in it).
    public static func dpopReplayDatabasePath(config: GatehouseConfig) -> String { config.home + "/dpop-proofs.sqlite" }

    /// The resource servers' own DPoP nonce key (32 bytes, 0600), made by
    /// the first API process that needs it: never one of the issuer's keys,
    /// so an API host needs nothing from the issuer's `keys/`.
    public static func dpopNonceKeyPath(config: GatehouseConfig) -> String { config.home + "/api-keys/dpop-nonce.key" }

    /// What one API adds for DPoP-bound tokens: the shared replay cache and,
    /// with `GATEHOUSE_API_DPOP_NONCE`, nonces of its own (the purpose names
    /// the API, so api-a's nonce is no good at api-b: RFC 9449 §9, "a nonce
    /// issued by any of them should be used only at the issuing server").
    public static func dpopGuard(config: GatehouseConfig, policy: AccessTokenPolicy, path: String) throws -> DPoPResourceGuard {
        let replayPath = dpopReplayDatabasePath(config: config)
        let unsynced = try DPoPReplayCacheBoot.prepare(path: replayPath)
        let replayCache = try SQLiteDPoPReplayCache(database: SQLiteDatabase(path: replayPath), syncsCheckpoints: !unsynced)
        let nonces = try config.apiDPoPNonces
            ? DPoPNonces(key: SecretKeyFile.loadOrCreate(path: dpopNonceKeyPath(config: config)),
                         purpose: "gatehouse resource server DPoP nonce " + policy.audience)
            : nil
        return DPoPResourceGuard(policy: policy, path: path, replayCache: replayCache, nonces: nonces)
    }

    /// The JWKS cache of one process; nothing is fetched until a token needs it.
    public static func jwksCache(config: GatehouseConfig, environment: [String: String], endpoint: String) -> JWKSCache {
        let client = HTTPSClient(caFile: caFile(home: config.home, environment: environment))
        return JWKSCache(fetcher: HTTPSJWKSFetcher(url: jwksURL(config: config), client: client),
                         store: JWKSFileStore(path: jwksCachePath(config: config)),
                         policy: JWKSCachePolicy(maximumAge: config.jwksMaximumAge),
                         log: { RequestLog.event(endpoint: endpoint, message: $0) })
    }
}
