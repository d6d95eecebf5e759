import IssuerStorage
import SSOCore

/// `POST /token` (RFC 6749 §3.2): client authentication, then one handler
/// per grant type.
public final class TokenResponder: Responder {
    let authenticator: ClientAuthenticator
    let authorizationCode: AuthorizationCodeGrant
    let refreshToken: RefreshTokenGrant
    let tokenExchange: TokenExchangeGrant
    let clientCredentials: ClientCredentialsGrant
    let dpop: IssuerDPoP

    public init(services: IssuerServices) throws {
        authenticator = services.clientAuthenticator
        authorizationCode = AuthorizationCodeGrant(services: services)
        refreshToken = try RefreshTokenGrant(services: services)
        tokenExchange = TokenExchangeGrant(services: services)
        clientCredentials = ClientCredentialsGrant(services: services)
        dpop = try services.dpop()
    }

    public func respond(to request: Request) throws -> Response {
        // RFC 6749 §3.2: "The client MUST use the HTTP POST method".
        guard request.method == "POST" else { return .methodNotAllowed(allowed: ["POST"]) }
        do {
            let form = try request.formParameters()
            let client = try authenticator.authenticate(request, form: form)
            let jkt = try dpop.authorizationServerProof(request, path: "/token", required: client.requireDPoP, clientID: client.clientID)?.jkt
            let body: TokenResponseBody
            let grantType = try form.single("grant_type")
            switch grantType {
            case nil: throw OAuthError.invalidRequest("grant_type is required")
            case "authorization_code": body = try authorizationCode.handle(form, client: client, dpopJKT: jkt)
            case "refresh_token": body = try refreshToken.handle(form, client: client, dpopJKT: jkt, ip: request.remoteAddress)
            case TokenExchangeRequest.grantType: body = try tokenExchange.handle(form, client: client, dpopJKT: jkt, ip: request.remoteAddress)
            case "client_credentials": body = try clientCredentials.handle(form, client: client, dpopJKT: jkt)
            default: throw OAuthError(.unsupportedGrantType, "this grant type is not supported")
            }
            SecurityEvents.tokensIssued(grantType: grantType ?? "")
            // RFC 6749 §5.1: "Cache-Control: no-store" and "Pragma: no-cache".
            var headers = [("Cache-Control", "no-store"), ("Pragma", "no-cache")]
            // RFC 9449 §8.2: the next nonce with every token a DPoP client gets.
            if jkt != nil, let nonce = dpop.currentNonce { headers.append(("DPoP-Nonce", nonce)) }
            return try .json(body, headers: headers)
        } catch let error as FormError {
            throw error.code == .tooLarge ? error : error.asOAuthError
        }
    }
}
