import SSOCore

/// No JWKS has ever been obtained (the issuer unreachable since this process
/// started, and nothing persisted): no token can be checked, which is a
/// temporary server-side condition, not the client's fault and not a 500.
public struct SigningKeysUnavailableError: Error, HTTPResponseError {
    /// Seconds the client is asked to wait; also the cache's retry interval
    /// while it holds no keys.
    public let retryAfter: Int
    public let detail: String

    public init(retryAfter: Int, detail: String) {
        self.retryAfter = retryAfter
        self.detail = detail
    }

    struct Body: Encodable {
        let error: String
        let error_description: String
    }

    public var response: Response {
        let body = Body(error: "temporarily_unavailable",
                        error_description: "the signing keys of the issuer cannot be obtained yet; retry later")
        return Response(status: 503, headers: [
            ("Content-Type", "application/json"),
            ("Cache-Control", "no-store"),
            ("Retry-After", String(retryAfter)),
        ], body: (try? JSON.encode(body)) ?? Array("{}".utf8))
    }

    public var logDetail: String { "no JWKS available: \(detail)" }
}
