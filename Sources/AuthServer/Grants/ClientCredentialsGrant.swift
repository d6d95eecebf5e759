import IssuerStorage
import SSOCore

/// `grant_type=client_credentials` (RFC 6749 §4.4): a machine client asks
/// for an access token of its own, to call an API with no user involved.
/// RFC 6749 §4.4.3: "A refresh token SHOULD NOT be included", and no
/// ID token either (no one signed in).
public struct ClientCredentialsGrant {
    let apis: APIRegistry
    let tokenIssuer: TokenIssuer
    let issuer: String
    let lifetimes: TokenLifetimes

    /// `dpopJKT`: the key of the request's checked DPoP proof, if any.
    public func handle(_ form: FormParameters, client: Client, dpopJKT: String? = nil) throws -> TokenResponseBody {
        // RFC 6749 §4.4: "The client credentials grant type MUST only be used
        // by confidential clients"; §5.2 unauthorized_client otherwise.
        guard client.isConfidential, client.allows(grantType: "client_credentials") else {
            throw OAuthError(.unauthorizedClient, "this client may not use the client_credentials grant",
                             detail: "client \(client.clientID) is \(client.isConfidential ? "not registered for client_credentials" : "public")")
        }
        let scope = try scope(form, client: client)
        let resources = try ResourceIndicator.parse(form)
        let target = try TokenTarget.select(scope: scope, resources: resources, apis: apis.all(), issuer: issuer)
        let lifetime = lifetimes.accessToken(for: client)
        let accessToken = try tokenIssuer.signMachineToken(clientID: client.clientID, registration: client.registrationID, target: target, lifetime: lifetime,
                                                                    confirmationJKT: dpopJKT)
        return TokenResponseBody(access_token: accessToken, token_type: TokenResponseBody.tokenType(boundTo: dpopJKT), expires_in: lifetime,
                                 refresh_token: nil, id_token: nil, scope: target.scope.joined(separator: " "))
    }

    /// RFC 6749 §3.3: "If the client omits the scope parameter when
    /// requesting authorization, the authorization server MUST either
    /// process the request using a pre-defined default value or fail":
    /// the default is every API scope the client is registered for. A
    /// requested scope must be one of those; OpenID Connect scopes speak
    /// for a user and have no meaning here.
    func scope(_ form: FormParameters, client: Client) throws -> [String] {
        let apis = try self.apis.all()
        let registered = client.scopes.filter { apis.owner(of: $0) != nil }
        guard let text = try form.single("scope") else {
            guard !registered.isEmpty else { throw OAuthError(.invalidScope, "the client is registered for no API scope") }
            return registered
        }
        let requested = try ScopeParameter.parse(text)
        guard !requested.isEmpty else { throw OAuthError(.invalidScope, "scope is empty") }
        try ScopeParameter.checkKnown(requested, apis: self.apis)
        if let standard = requested.first(where: StandardScopes.contains) {
            throw OAuthError(.invalidScope, "scope \(standard) needs a user; client_credentials tokens carry API scopes only")
        }
        try ScopeParameter.checkAllowed(requested, for: client)
        return requested
    }
}
