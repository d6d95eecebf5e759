import OutboundHTTPS
import SSOCore

/// Pushed authorization requests (RFC 9126), from the app's side: when
/// discovery names a PAR endpoint, the authorization request goes to it
/// directly over TLS, and the browser is sent to /authorize with only
/// `client_id` and the `request_uri` it returned (§4). The PKCE challenge,
/// state, nonce and redirect URI never travel through the browser's URL,
/// where they could be read or altered; the issuer validates them before
/// the browser opens, so a refusal is reported here, not on a web page.
enum PushedAuthorization {
    /// RFC 9126 §2.2.
    struct Reply: Decodable {
        let requestURI: String
        let expiresIn: Int

        enum CodingKeys: String, CodingKey {
            case requestURI = "request_uri"
            case expiresIn = "expires_in"
        }
    }

    /// The URL to open in the browser: a pushed request's reference when the
    /// issuer takes pushed requests, the whole request otherwise.
    static func browserURL(for attempt: AuthorizationAttempt, metadata: ProviderMetadata, transport: HTTPSTransport) throws -> String {
        guard let endpoint = metadata.pushedAuthorizationRequestEndpoint else {
            return attempt.url(authorizationEndpoint: metadata.authorizationEndpoint)
        }
        let reply = try push(parameters(of: attempt), to: endpoint, transport: transport)
        let separator = metadata.authorizationEndpoint.contains("?") ? "&" : "?"
        return metadata.authorizationEndpoint + separator
            + FormParser.encode([("client_id", attempt.clientID), ("request_uri", reply.requestURI)])
    }

    /// The parameters the attempt would put in the authorize URL, read back
    /// from that URL: one definition of the request, pushed or not.
    static func parameters(of attempt: AuthorizationAttempt) throws -> [(String, String)] {
        let url = attempt.url(authorizationEndpoint: "")
        let query = url.drop { $0 != "?" }.dropFirst()
        return try FormParser.parse(Array(query.utf8)).pairs.map { ($0.name, $0.value) }
    }

    /// §2.1: a public client authenticates with `client_id` in the body,
    /// which the parameters already hold. §2.2: the answer is 201.
    static func push(_ parameters: [(String, String)], to endpoint: String, transport: HTTPSTransport) throws -> Reply {
        let reply = try transport.postForm(endpoint, parameters)
        guard reply.status == 201 else {
            throw ToolError("pushed authorization request refused: \(OAuthErrorBody.summary(of: reply))")
        }
        let pushed = try reply.decode(Reply.self, what: "pushed authorization request")
        guard !pushed.requestURI.isEmpty, pushed.expiresIn > 0 else {
            throw ToolError("pushed authorization request: the reply has no usable request_uri")
        }
        return pushed
    }
}
