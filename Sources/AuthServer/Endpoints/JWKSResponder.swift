import IssuerStorage
import SSOCore

/// `GET /.well-known/jwks.json`: every published signing key.
///
/// The serialized set is cached and rebuilt only when another process may
/// have committed since (IssuerStorage.changeMarker), or every 10 s at most,
/// because superseded keys leave the set as time passes. `ssoctl keys
/// rotate` shows up at once while a steady state costs one marker read.
public final class JWKSResponder: OneEndpointGroup {
    public static let path = "/.well-known/jwks.json"
    public let served: SingleEndpoint

    public init(keys: SigningKeys) {
        let document = PublishedJWKS(keys: keys)
        served = SingleEndpoint(Endpoint(Self.path, .read, cache: .asAnswered, handler: document.respond))
    }

}

/// The JWKS as last served, and when to read it again.
final class PublishedJWKS {
    let keys: SigningKeys
    private var cachedVersion: Int64?
    private var builtAt: Int64 = 0
    private var cachedKIDs: [String] = []
    private var cachedResponse = Response(status: 500)

    init(keys: SigningKeys) {
        self.keys = keys
        // Read the keys at start, so a worker that has not answered yet
        // still has them to serve if the database goes away (below).
        _ = try? freshResponse()
    }

    func respond(_ exchange: EndpointExchange) throws -> Response {
        let request = exchange.request
        let response = try currentResponse()
        if let tag = response.header("ETag"), request.header("if-none-match") == tag {
            return Response(status: 304, headers: response.headers.filter { $0.name != "Content-Type" })
        }
        return response
    }

    func currentResponse() throws -> Response {
        do { return try freshResponse() } catch let error as HTTPResponseError where error.response.status == 503 && cachedVersion != nil {
            // The database is out of reach (a PostgreSQL outage, a failover):
            // the keys published a moment ago are still the keys, and every
            // verifier needs them to keep working. What changes meanwhile
            // shows once the database is back.
            return cachedResponse.logging("database unavailable; served the keys as last read (\(error.logDetail))")
        }
    }

    func freshResponse() throws -> Response {
        let version = try keys.storage.changeMarker()
        let now = keys.clock()
        if version == cachedVersion, now - builtAt < 10 { return cachedResponse }
        let records = try keys.publishedKeys()
        builtAt = now
        let kids = records.map(\.kid)
        if kids != cachedKIDs || cachedVersion == nil {
            let set = JWKSet(keys: try records.map {
                try IssuerPublicKey.jwk(pem: Array($0.publicPEM.utf8), algorithm: $0.algorithm, kid: $0.kid)
            })
            var response = try Response.json(set, headers: [("Cache-Control", "public, max-age=60")])
            response.setHeader("ETag", "\"" + Base64URL.encode(SHA256.hash(response.body).prefix(16)) + "\"")
            cachedResponse = response
            cachedKIDs = kids
        }
        cachedVersion = version
        return cachedResponse
    }
}
