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
            let jkt = try proof(request, client: client)?.jkt
            let body: TokenResponseBody
            switch try form.single("grant_type") {
            case nil: throw OAuthError.invalidRequest("grant_type is required")
            case "authorization_code": body = try authorizationCode.handle(form, client: client, dpopJKT: jkt)
            case "refresh_token": body = try refreshToken.handle(form, client: client, dpopJKT: jkt)
            case TokenExchangeRequest.grantType: body = try tokenExchange.handle(form, client: client, dpopJKT: jkt)
            case "client_credentials": body = try clientCredentials.handle(form, client: client, dpopJKT: jkt)
            default: throw OAuthError(.unsupportedGrantType, "this grant type is not supported")
            }
            // RFC 6749 §5.1: "Cache-Control: no-store" and "Pragma: no-cache".
            var headers = [("Cache-Control", "no-store"), ("Pragma", "no-cache")]
            // RFC 9449 §8.2: a fresh nonce with every answer to a DPoP client.
            if jkt != nil, let nonce = dpop.currentNonce { headers.append(("DPoP-Nonce", nonce)) }
            return try .json(body, headers: headers)
        } catch let error as FormError {
            throw error.code == .tooLarge ? error : error.asOAuthError
        }
    }

    /// The request's DPoP proof, checked (IssuerDPoP), or nil when it has
    /// none, which a client registered with `--require-dpop` may not do.
    /// RFC 9449 §5: a refused proof is `invalid_dpop_proof`; §8: a missing
    /// or stale nonce is `use_dpop_nonce` with the nonce to use.
    func proof(_ request: Request, client: Client) throws -> VerifiedDPoPProof? {
        do {
            guard let proof = try dpop.tokenEndpointProof(request) else {
                guard !client.requireDPoP else {
                    var error = OAuthError(.invalidDPoPProof, "this client must send a DPoP proof (RFC 9449)",
                                           detail: "client \(client.clientID) requires DPoP; no proof")
                    error.dpopNonce = dpop.currentNonce
                    throw error
                }
                return nil
            }
            return proof
        } catch IssuerDPoPRefusal.invalidProof(let refusal) {
            throw OAuthError(.invalidDPoPProof, DPoPRefusalText.describe(refusal.reason), detail: "DPoP proof refused: \(refusal)")
        } catch IssuerDPoPRefusal.nonceRequired(let nonce, let detail) {
            var error = OAuthError(.useDPoPNonce, "the DPoP proof must carry the nonce in the DPoP-Nonce header", detail: detail)
            error.dpopNonce = nonce
            throw error
        }
    }
}
