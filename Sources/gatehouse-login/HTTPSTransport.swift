import OutboundHTTPS

/// OutboundHTTPS's client with this tool's limits, its failures turned into
/// one line the person at the terminal can act on. A person is waiting, so
/// the exchange may take longer than the issuer's 10 s; a token reply or a
/// JWKS fits in 1 MiB. `--ca-file` trusts that CA instead of the system's,
/// as `curl --cacert` does.
struct HTTPSTransport {
    private let client: HTTPSClient

    init(caFile: String?) {
        client = HTTPSClient(trust: caFile.map(OutboundTrust.only) ?? .system, timeout: 20, connectTimeout: 5,
                             maximumResponseBytes: 1024 * 1024, userAgent: "gatehouse-login")
    }

    func get(_ url: String, headers: [(name: String, value: String)] = []) throws -> HTTPSResponse {
        try send(HTTPSRequest(url: url, headers: headers))
    }

    func postForm(_ url: String, _ form: [(String, String)]) throws -> HTTPSResponse {
        try send(.form(url, form))
    }

    func send(_ request: HTTPSRequest) throws -> HTTPSResponse {
        do {
            return try client.send(request)
        } catch let error as HTTPSClientError {
            // Never the query: it may hold a token (end session's id_token_hint).
            let place = request.origin ?? String(request.url.prefix { $0 != "?" })
            throw ToolError("\(request.method) \(place): \(Self.explain(error))")
        }
    }

    static func explain(_ error: HTTPSClientError) -> String {
        switch error.code {
        case .certificate: "TLS: the server's certificate is not trusted (\(error.detail)); pass the CA with --ca-file"
        case .caFile: "\(error.detail) (check --ca-file)"
        case .library: "\(error.detail) (install Debian's libcurl4)"
        case .resolve: "cannot resolve \(error.detail)"
        case .connect: "cannot connect to \(error.detail)"
        case .timeout: "timed out (\(error.detail))"
        case .responseTooLarge: "response \(error.detail)"
        case .invalidURL, .invalidRequest: error.detail
        default: error.description
        }
    }
}
