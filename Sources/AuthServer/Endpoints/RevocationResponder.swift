import IssuerStorage
import SSOCore

/// `POST /revoke` (RFC 7009): a client gives up a refresh or access token.
///
/// Choices where the RFC leaves room, or where this server departs from it:
/// - A refresh token revokes its whole family, every rotation of the same
///   grant (RFC 9700 §4.14.2 families), and every access token the grant
///   issued (RFC 7009 §2.1: "If the token passed to the request is a
///   refresh token and the authorization server supports the revocation of
///   access tokens, then the authorization server SHOULD also invalidate
///   all access tokens based on the same authorization grant"): userinfo
///   and introspection refuse them at once (GrantRevocation, by their
///   `grant_id`); the resource servers, validating offline, honour them
///   until they expire (at most GATEHOUSE_ACCESS_TOKEN_TTL), as for any
///   self-contained token. A revoked access token itself is refused by
///   userinfo and introspection at once.
/// - A token issued to another client is NOT revoked, and the answer is the
///   same 200 as for a revoked or unknown token. RFC 7009 §2.1 says such a
///   request "is refused and the client is informed of the error", but an
///   error would tell client B that a string it holds is a live token of
///   client A (a probing oracle); the outcome for the legitimate owner is
///   unchanged either way.
/// - A DPoP-bound token (a public client's refresh token, RFC 9449 §5, or
///   an access token with `cnf.jkt`, §6.1): RFC 7009 asks only for the
///   client's authentication, and apps revoke at sign-out without a proof
///   (AppAuth does), so a request without one still revokes it; failing
///   would leave the token alive. A client registered with `--require-dpop`
///   must send a proof here as at /token, and a proof that is sent must be
///   by the token's key: then a copy taken without the key cannot end the
///   app's grant either.
public final class RevocationResponder: OneEndpointGroup {
    public static let path = "/revoke"
    public let served: SingleEndpoint

    public init(services: IssuerServices) throws {
        let revoking = Revoking(tokenLocator: services.tokenLocator, revocation: services.tokenRevocation)
        // RFC 7009 §2.1: "The client requests the revocation of a particular
        // token by making an HTTP POST request to the token revocation
        // endpoint URL"; "The authorization server first validates the
        // client credentials (in case of a confidential client)"; token REQUIRED.
        served = SingleEndpoint(Endpoint(Self.path, .post, input: .form,
                                         guards: [ClientAuthentication(services.clientAuthenticator), RequiredParameter("token"),
                                                  IssuerDPoPProof(try services.dpop(), path: Self.path, .whenClientRequires)],
                                         errors: OAuthErrors(), cache: .credentials, handler: revoking.revoke))
    }

}

/// The revocation endpoint's handler.
struct Revoking {
    let tokenLocator: PresentedTokenLocator
    let revocation: TokenRevocation

    func revoke(_ exchange: EndpointExchange) throws -> Response {
        let form = exchange.parameters
        try revoke(try form.single("token") ?? "", hint: try form.single("token_type_hint"), client: try exchange.client(),
                   dpopJKT: try exchange.dpopJKT())
        // RFC 7009 §2.2: "The authorization server responds with HTTP
        // status code 200 if the token has been revoked successfully or
        // if the client submitted an invalid token." The body is empty.
        return Response(status: 200)
    }

    func revoke(_ token: String, hint: String?, client: Client, dpopJKT: String?) throws {
        switch try tokenLocator.locate(token, hint: hint) {
        case .refreshToken(let details):
            guard details.clientID.bytesEqual(client.clientID) else { return }
            try checkBinding(dpopJKT, boundTo: details.record.dpopJKT, what: "refresh token")
            try revocation.revokeGrant(familyID: details.familyID)
        case .accessToken(let claims):
            guard claims.client_id.bytesEqual(client.clientID) else { return }
            try checkBinding(dpopJKT, boundTo: claims.cnf?.jkt, what: "access token")
            try revocation.revokeAccessToken(jti: claims.jti, expiresAt: claims.exp)
        case .unknown:
            // RFC 7009 §2.2: "invalid tokens do not cause an error response
            // since the client cannot handle such an error in a reasonable way".
            return
        }
    }

    /// A proof, when sent (a `--require-dpop` client always sends one), must
    /// be by the key the token is bound to; without one a bound token is
    /// revoked as RFC 7009 has it (see the type's comment).
    func checkBinding(_ presented: String?, boundTo bound: String?, what: String) throws {
        guard let presented else { return }
        try DPoPBinding.check(presented: presented, boundTo: bound, what: what)
    }
}
