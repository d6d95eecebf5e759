import FoundationEssentials
import OutboundHTTPS
import SSOCore

/// Where a `JWKSCache` gets a fresh key set from. A protocol so tests can
/// hand the cache key sets (or failures) without a network.
public protocol JWKSFetching {
    func fetchKeySet() throws -> JWKSet
}

public struct JWKSFetchError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Fetches the issuer's JWKS over HTTPS (the same URL any other relying
/// party would use; never the issuer's database).
public struct HTTPSJWKSFetcher: JWKSFetching {
    public let url: String
    public let client: HTTPSClient

    public init(url: String, client: HTTPSClient) {
        self.url = url
        self.client = client
    }

    public func fetchKeySet() throws -> JWKSet {
        // RFC 9111 §5.2.1.4 no-cache: past nginx's short copy of the JWKS
        // to the issuer's responder. A resource server fetches rarely (its
        // own copy lives GATEHOUSE_JWKS_MAX_AGE), and when it does because a
        // token names a kid it has not seen, a copy from before a rotation
        // would not have that kid.
        let response = try client.get(url, headers: [(name: "Cache-Control", value: "no-cache")])
        guard response.status == 200 else { throw JWKSFetchError("\(url) answered \(response.status)") }
        do {
            return try JSON.decoder.decode(JWKSet.self, from: Data(response.body))
        } catch {
            throw JWKSFetchError("\(url) did not return a JWK set: \(error)")
        }
    }
}
