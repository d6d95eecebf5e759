import AuthServer
import OutboundHTTPS
import SSOCore

/// The issuer's requests to providers (discovery document, JWKS, token)
/// through the one HTTPS client and its rules: https only, the system
/// trust store plus GATEHOUSE_CA_FILE plus the development layout's
/// `tls/ca.pem`, no redirects, 10 s, 1 MiB.
public struct OutboundDocumentFetcher: ProviderDocumentFetching {
    let client: HTTPSClient

    public init(_ config: GatehouseConfig, environment: [String: String]) {
        client = HTTPSClient(trust: .gatehouse(home: config.home, environment: environment), timeout: 10, connectTimeout: 5,
                             userAgent: "gatehouse-issuer")
    }

    public func get(_ url: String) throws -> (status: Int, body: [UInt8]) {
        let response = try client.get(url, headers: [(name: "Accept", value: "application/json")])
        return (response.status, response.body)
    }

    public func postForm(_ url: String, _ fields: [(String, String)], headers: [(name: String, value: String)]) throws -> (status: Int, body: [UInt8]) {
        let response = try client.postForm(url, fields, headers: [(name: "Accept", value: "application/json")] + headers)
        return (response.status, response.body)
    }
}
