import FoundationEssentials
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

    /// The JWKS cache of one process; nothing is fetched until a token needs it.
    public static func jwksCache(config: GatehouseConfig, environment: [String: String], endpoint: String) -> JWKSCache {
        let client = HTTPSClient(caFile: caFile(home: config.home, environment: environment))
        return JWKSCache(fetcher: HTTPSJWKSFetcher(url: jwksURL(config: config), client: client),
                         store: JWKSFileStore(path: jwksCachePath(config: config)),
                         policy: JWKSCachePolicy(maximumAge: config.jwksMaximumAge),
                         log: { RequestLog.event(endpoint: endpoint, message: $0) })
    }
}
