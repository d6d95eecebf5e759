import IssuerStorage
import SSOCore

/// RFC 9449 §4.3 at the issuer's own endpoints: a `DPoP` header is a
/// proof for this method and this endpoint's URI, checked in IssuerDPoP's
/// order; a client registered with `--require-dpop` must send one (§5:
/// "the authorization server MUST ... require DPoP" for such a client).
/// After ClientAuthentication, which says whose request it is.
public struct IssuerDPoPProof: EndpointGuard {
    public enum Requirement: Sendable {
        /// When the client's registration says so (token, revocation).
        case whenClientRequires
        /// Never required; bound when sent (PAR: RFC 9449 §10.1).
        case optional
    }

    let dpop: IssuerDPoP
    let path: String
    let requirement: Requirement

    public init(_ dpop: IssuerDPoP, path: String, _ requirement: Requirement) {
        self.dpop = dpop
        self.path = path
        self.requirement = requirement
    }

    public var readsInput: Bool { false }

    public func check(_ exchange: inout EndpointExchange) throws {
        let client = try exchange.client()
        let required = requirement == .whenClientRequires && client.mustUseDPoP
        exchange.dpopProof = try dpop.authorizationServerProof(exchange.request, path: path, required: required, clientID: client.clientID)
        exchange.dpopChecked = true
    }
}
