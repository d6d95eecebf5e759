import IssuerStorage
import SSOCore

/// `POST /par` (RFC 9126): a client pushes its authorization request
/// directly, authenticated as at /token, and gets a single-use
/// `request_uri` to send the browser to /authorize with.
///
/// Choices where the RFC leaves room:
/// - The request is validated in full at push time, exactly as /authorize
///   validates it (same validator), and again when /authorize claims it,
///   since the client's registration may have changed in between (§4).
/// - `client_id` may be left out of the body by a client that
///   authenticates with HTTP Basic (the header names it); when present it
///   must be that client (ClientAuthenticator refuses a mismatch). The
///   stored request always carries the authenticated client's id.
/// - `prompt=consent` is accepted here and answered `consent_required` at
///   /authorize (§2.3: no user-interaction error codes at push time).
/// - `expires_in` is `PushedAuthorizations.lifetime` (90 s).
public final class PushedAuthorizationResponder: OneEndpointGroup {
    public static let path = "/par"
    public let served: SingleEndpoint

    public init(services: IssuerServices) throws {
        let pushing = AuthorizationPush(pushedAuthorizations: services.pushedAuthorizations, validator: services.authorizationRequestValidator,
                                        requestObjects: services.requestObjects, dpop: try services.dpop())
        // RFC 9126 §2.3: "405: If the request did not use the POST method,
        // the authorization server responds with an HTTP 405 (Method Not
        // Allowed) status code." §2.1: "1. Authenticate the client in the
        // same way as at the token endpoint (Section 2.3 of [RFC6749])."
        served = SingleEndpoint(Endpoint(Self.path, .post, input: .form,
                                         guards: [ClientAuthentication(services.clientAuthenticator), NoPushedRequestURI(),
                                                  IssuerDPoPProof(pushing.dpop, path: Self.path, .optional)],
                                         errors: OAuthErrors(), cache: .credentials, handler: pushing.push))
    }

}

/// PAR's handler: what is kept of the pushed request, and its `request_uri`.
struct AuthorizationPush {
    let pushedAuthorizations: PushedAuthorizations
    let validator: AuthorizationRequestValidator
    let requestObjects: RequestObjects
    let dpop: IssuerDPoP

    /// RFC 9126 §2.2.
    struct Body: Encodable {
        let request_uri: String
        let expires_in: Int
    }

    func push(_ exchange: EndpointExchange) throws -> Response {
        let proof = exchange.dpopProof, client = try exchange.client()
        let pushed = try binding(try authorizationParameters(exchange.parameters, client: client), to: proof)
        let encoded = try PushedAuthorizations.Encoded(pushed)
        try validate(pushed)
        let requestURI = try pushedAuthorizations.push(encoded, clientID: client.clientID)
        // §2.2: "the server MUST generate a request URI and provide it in
        // the response with a 201 HTTP status code"; like every reply
        // that carries a credential, never cached (CachePolicy.credentials).
        let nonce = proof != nil ? dpop.currentNonce.map { [("DPoP-Nonce", $0)] } ?? [] : []
        return try .json(Body(request_uri: requestURI, expires_in: PushedAuthorizations.lifetime), status: 201, headers: nonce)
    }

    /// RFC 9449 §10.1: "the DPoP proof ... sent to the PAR endpoint ...
    /// [binds] the authorization code to the public key", as `dpop_jkt`
    /// would; with both, they must name the same key.
    func binding(_ pushed: FormParameters, to proof: VerifiedDPoPProof?) throws -> FormParameters {
        guard let proof else { return pushed }
        if let named = try pushed.single("dpop_jkt") {
            guard named.bytesEqual(proof.jkt) else {
                throw OAuthError(.invalidDPoPProof, "dpop_jkt does not name the key of the DPoP proof", detail: "dpop_jkt and proof key differ")
            }
            return pushed
        }
        return FormParameters(pairs: pushed.pairs + [("dpop_jkt", proof.jkt)])
    }

    /// The authorization request the client pushed, as /authorize will see
    /// it: the parameters an authorization request has
    /// (`AuthorizationRequestValidator.understoodParameters`; RFC 6749 §3.1:
    /// the server "MUST ignore unrecognized request parameters", so nothing
    /// else is stored), with `client_id` the authenticated client's. (§2.1:
    /// client authentication parameters "are relied upon only for client
    /// authentication and are not germane to the authorization request
    /// itself"; `client_secret` never gets this far.)
    func authorizationParameters(_ form: FormParameters, client: Client) throws -> FormParameters {
        // RFC 9126 §3: "All other request parameters, i.e., those pertaining
        // to the authorization request itself, MUST appear as claims of the
        // JWT representing the authorization request": with `request`, the
        // object's parameters and nothing of the body (RFC 9101 §6.3); its
        // client_id must be the authenticated client's (checked as RFC 9101
        // §6.3 asks, against the client that authenticated).
        if let object = try form.single("request") { return try requestObjects.parameters(of: object, client: client) }
        let understood = form.pairs.filter { $0.name != "client_id" && AuthorizationRequestValidator.understoodParameters.contains($0.name) }
        return FormParameters(pairs: [("client_id", client.clientID)] + understood)
    }

    /// §2.1: "3. Validate the pushed request as it would an authorization
    /// request sent to the authorization endpoint." Errors are the token
    /// endpoint's JSON (§2.3), never a redirect: what /authorize would show
    /// as an error page (redirect_uri missing or not registered) is
    /// invalid_request, "the default error code" of §2.3.
    func validate(_ pushed: FormParameters) throws {
        do {
            _ = try validator.validate(pushed, source: .pushing)
        } catch AuthorizationFailure.errorPage(_, let description, let detail, _, _) {
            throw OAuthError.invalidRequest(description, detail: detail)
        } catch AuthorizationFailure.redirect(_, _, let error) {
            throw error
        }
    }
}
