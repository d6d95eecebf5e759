import IssuerStorage
import SSOCore

/// RFC 6749 §2.3: "the client and authorization server establish a client
/// authentication method"; §3.2.1: "Confidential clients ... MUST
/// authenticate with the authorization server" at the token endpoint, and
/// the same holds at PAR (RFC 9126 §2.1), revocation (RFC 7009 §2.1) and
/// introspection (RFC 7662 §2.1). ClientAuthenticator knows the methods;
/// this guard puts the client it found on the exchange.
public struct ClientAuthentication: EndpointGuard {
    public enum Mode: Sendable {
        /// A confidential client's secret or a public client's id, from the
        /// Authorization header or the body.
        case anyClient
        /// RFC 7662 §2.1: "the endpoint MUST also require some form of
        /// authorization": a confidential client. With an Authorization
        /// header, from the header before the body is read, so an
        /// unauthenticated caller learns nothing about its body (not even
        /// whether it parses); `client_secret_post` and `private_key_jwt`
        /// are in the body, and a body that does not parse is then the
        /// same invalid_client as no credentials.
        case confidentialFromHeader
    }

    let authenticator: ClientAuthenticator
    let mode: Mode

    public init(_ authenticator: ClientAuthenticator, _ mode: Mode = .anyClient) {
        self.authenticator = authenticator
        self.mode = mode
    }

    public var readsInput: Bool { mode == .anyClient }

    public func check(_ exchange: inout EndpointExchange) throws {
        switch mode {
        case .anyClient: exchange.authenticatedClient = try authenticator.authenticate(exchange.request, form: exchange.parameters)
        case .confidentialFromHeader: exchange.authenticatedClient = try confidentialClient(exchange.request)
        }
    }

    func confidentialClient(_ request: Request) throws -> Client {
        if request.header("authorization") != nil {
            let client = try authenticator.authenticateConfidential(request, form: FormParameters(pairs: []))
            // Authenticated: the body may now say it carries a second method.
            let form = try request.formParameters()
            guard try form.single("client_secret") == nil, try form.single("client_assertion") == nil else {
                var error = OAuthError(.invalidClient, "use exactly one client authentication method", detail: "Basic and a body method")
                error.usedBasicAuthentication = true
                throw error
            }
            return client
        }
        guard let form = try? request.formParameters() else {
            throw OAuthError(.invalidClient, "client authentication is required", detail: "no Authorization header and no readable form")
        }
        return try authenticator.authenticateConfidential(request, form: form)
    }
}
