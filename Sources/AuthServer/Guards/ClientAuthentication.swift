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
        /// authorization": a confidential client, from the header alone,
        /// before the body is read, so an unauthenticated caller learns
        /// nothing about its body (not even whether it parses).
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
        case .confidentialFromHeader: exchange.authenticatedClient = try authenticator.authenticateConfidential(exchange.request)
        }
    }
}
