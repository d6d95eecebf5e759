import FoundationEssentials
import OutboundHTTPS
import SQLiteClient
import SSOCore

/// What both resource servers build once at process start from the
/// configuration: where the JWKS comes from, whom to trust for its TLS
/// certificate, and where the last good set is kept.
public enum ResourceServerSetup {
    /// How the issuer's JWKS is fetched: Gatehouse's outbound trust (the
    /// system's CAs, `$GATEHOUSE_CA_FILE`, the home's local CA), and a
    /// shorter bound than the 10 s default, because a single-threaded
    /// responder holds its requests while it waits. libcurl is unloaded
    /// after each fetch: it would cost each API process about 5.5 MB
    /// resident for a fetch an hour.
    public static func jwksClient(home: String, environment: [String: String]) -> HTTPSClient {
        HTTPSClient(trust: .gatehouse(home: home, environment: environment), timeout: 6, connectTimeout: 3,
                    maximumResponseBytes: 256 * 1024, unloadsLibraryWhenIdle: true)
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
        let client = jwksClient(home: config.home, environment: environment)
        return JWKSCache(fetcher: HTTPSJWKSFetcher(url: jwksURL(config: config), client: client),
                         store: JWKSFileStore(path: jwksCachePath(config: config)),
                         policy: JWKSCachePolicy(maximumAge: config.jwksMaximumAge),
                         log: { RequestLog.event(endpoint: endpoint, message: $0) })
    }
}
