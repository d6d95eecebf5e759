import IssuerStorage
import SSOCore

/// `POST /token` (RFC 6749 §3.2): client authentication and the DPoP proof
/// (the guards), then one handler per grant type.
public final class TokenResponder: EndpointGroup {
    public static let path = "/token"
    let served: SingleEndpoint

    public init(services: IssuerServices) throws {
        let grants = try TokenGrants(services: services)
        // RFC 6749 §3.2: "The client MUST use the HTTP POST method".
        served = SingleEndpoint(Endpoint(Self.path, .post, input: .form,
                                         guards: [ClientAuthentication(services.clientAuthenticator),
                                                  IssuerDPoPProof(grants.dpop, path: Self.path, .whenClientRequires)],
                                         errors: OAuthErrors(), cache: .credentials, handler: grants.issue))
    }

    public var endpoints: [Endpoint] { [served.endpoint] }
    public func respond(to request: Request) throws -> Response { try served.respond(to: request) }
}

/// The token endpoint's handler: one grant handler per grant type.
struct TokenGrants {
    let authorizationCode: AuthorizationCodeGrant
    let refreshToken: RefreshTokenGrant
    let tokenExchange: TokenExchangeGrant
    let clientCredentials: ClientCredentialsGrant
    let dpop: IssuerDPoP

    init(services: IssuerServices) throws {
        authorizationCode = AuthorizationCodeGrant(services: services)
        refreshToken = try RefreshTokenGrant(services: services)
        tokenExchange = TokenExchangeGrant(services: services)
        clientCredentials = ClientCredentialsGrant(services: services)
        dpop = try services.dpop()
    }

    func issue(_ exchange: EndpointExchange) throws -> Response {
        let form = exchange.parameters, client = try exchange.client(), jkt = try exchange.dpopJKT(), ip = exchange.request.remoteAddress
        let body: TokenResponseBody
        let grantType = try form.single("grant_type")
        switch grantType {
        case nil: throw OAuthError.invalidRequest("grant_type is required")
        case "authorization_code": body = try authorizationCode.handle(form, client: client, dpopJKT: jkt)
        case "refresh_token": body = try refreshToken.handle(form, client: client, dpopJKT: jkt, ip: ip)
        case TokenExchangeRequest.grantType: body = try tokenExchange.handle(form, client: client, dpopJKT: jkt, ip: ip)
        case "client_credentials": body = try clientCredentials.handle(form, client: client, dpopJKT: jkt)
        default: throw OAuthError(.unsupportedGrantType, "this grant type is not supported")
        }
        SecurityEvents.tokensIssued(grantType: grantType ?? "")
        // RFC 9449 §8.2: the next nonce with every token a DPoP client gets.
        return try .json(body, headers: jkt != nil ? dpop.currentNonce.map { [("DPoP-Nonce", $0)] } ?? [] : [])
    }
}
