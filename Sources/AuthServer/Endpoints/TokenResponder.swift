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

    public init(services: IssuerServices) throws {
        authenticator = services.clientAuthenticator
        authorizationCode = AuthorizationCodeGrant(services: services)
        refreshToken = try RefreshTokenGrant(services: services)
        tokenExchange = TokenExchangeGrant(services: services)
        clientCredentials = ClientCredentialsGrant(services: services)
    }

    public func respond(to request: Request) throws -> Response {
        // RFC 6749 §3.2: "The client MUST use the HTTP POST method".
        guard request.method == "POST" else { return .methodNotAllowed(allowed: ["POST"]) }
        do {
            let form = try request.formParameters()
            let client = try authenticator.authenticate(request, form: form)
            try checkDPoPRequirement(request, client: client)
            let body: TokenResponseBody
            switch try form.single("grant_type") {
            case nil: throw OAuthError.invalidRequest("grant_type is required")
            case "authorization_code": body = try authorizationCode.handle(form, client: client)
            case "refresh_token": body = try refreshToken.handle(form, client: client)
            case TokenExchangeRequest.grantType: body = try tokenExchange.handle(form, client: client)
            case "client_credentials": body = try clientCredentials.handle(form, client: client)
            default: throw OAuthError(.unsupportedGrantType, "this grant type is not supported")
            }
            // RFC 6749 §5.1: "Cache-Control: no-store" and "Pragma: no-cache".
            return try .json(body, headers: [("Cache-Control", "no-store"), ("Pragma", "no-cache")])
        } catch let error as FormError {
            throw error.code == .tooLarge ? error : error.asOAuthError
        }
    }

    /// A client registered with `--require-dpop` gets sender-constrained
    /// tokens or none (RFC 9449 §5: invalid_dpop_proof). Until this server
    /// verifies DPoP proofs it has no way to bind a token to a key, so every
    /// token request of such a client is refused: the requirement fails
    /// closed, never silently into bearer tokens.
    func checkDPoPRequirement(_ request: Request, client: Client) throws {
        guard client.requireDPoP else { return }
        guard request.header("dpop") != nil else {
            throw OAuthError(.invalidDPoPProof, "this client must send a DPoP proof (RFC 9449)", detail: "client \(client.clientID) requires DPoP")
        }
        throw OAuthError(.invalidDPoPProof, "DPoP proofs are not accepted by this server yet",
                         detail: "client \(client.clientID) requires DPoP, which is not implemented")
    }
}
