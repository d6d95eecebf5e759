import IssuerStorage
import SSOCore

/// `POST /token` (RFC 6749 §3.2): client authentication and the DPoP proof
/// (the guards), then one handler per grant type.
public final class TokenResponder: OneEndpointGroup {
    public static let path = "/token"
    public let served: SingleEndpoint

    public init(services: IssuerServices) throws {
        let grants = try TokenGrants(services: services)
        // RFC 6749 §3.2: "The client MUST use the HTTP POST method".
        served = SingleEndpoint(Endpoint(Self.path, .post, input: .form,
                                         guards: [ClientAuthentication(services.clientAuthenticator),
                                                  IssuerDPoPProof(grants.dpop, path: Self.path, .whenClientRequires)],
                                         errors: OAuthErrors(), cache: .credentials, handler: grants.issue))
    }

}

/// The token endpoint's handler: one grant handler per grant type.
struct TokenGrants {
    let authorizationCode: AuthorizationCodeGrant
    let refreshToken: RefreshTokenGrant
    let tokenExchange: TokenExchangeGrant
    let clientCredentials: ClientCredentialsGrant
    let dpop: IssuerDPoP

    /// The one place the grants are wired from the issuer's services: each
    /// grant's memberwise init names the few it uses (its stored lets), so
    /// what a grant may read or write is in its signature, not somewhere
    /// in the whole graph.
    init(services: IssuerServices) throws {
        let issuer = services.settings.issuer, lifetimes = services.settings.lifetimes
        let deviceIDBinding = DeviceIDBinding(groups: services.nativeSSOGroups)
        authorizationCode = AuthorizationCodeGrant(storage: services.storage, codes: services.codes, refreshTokens: services.refreshTokens,
                                                   deviceSecrets: services.deviceSecrets, apis: services.apis, tokenIssuer: services.tokenIssuer,
                                                   deviceIDBinding: deviceIDBinding, issuer: issuer, lifetimes: lifetimes, clock: services.clock)
        let rotation = RefreshTokenRotation(storage: services.storage, sealingKey: try services.refreshSealingKey(), clock: services.clock)
        refreshToken = RefreshTokenGrant(rotation: rotation, sessions: services.sessions, users: services.users,
                                         deviceSecrets: services.deviceSecrets, apis: services.apis, tokenIssuer: services.tokenIssuer,
                                         deviceIDBinding: deviceIDBinding, issuer: issuer, lifetimes: lifetimes)
        let checks = NativeSSOChecks(verifier: NativeSSOSubjectTokenVerifier(issuer: issuer, keys: services.publishedKeys),
                                     clients: services.clients, sessions: services.sessions, deviceSecrets: services.deviceSecrets,
                                     groups: services.nativeSSOGroups, clock: services.clock)
        tokenExchange = TokenExchangeGrant(checks: checks, storage: services.storage, refreshTokens: services.refreshTokens, apis: services.apis,
                                           tokenIssuer: services.tokenIssuer, issuer: issuer, lifetimes: lifetimes)
        clientCredentials = ClientCredentialsGrant(apis: services.apis, tokenIssuer: services.tokenIssuer, issuer: issuer, lifetimes: lifetimes)
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
