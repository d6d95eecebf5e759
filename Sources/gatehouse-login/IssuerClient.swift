import OutboundHTTPS
import SSOCore

/// This tool as a public client (RFC 8252 §8.4: no secret, `client_id` in
/// the body) of the issuer's token, revocation and end-session endpoints.
struct IssuerClient {
    let transport: HTTPSTransport
    let clientID: String
    /// With a key, every token request carries a DPoP proof (RFC 9449 §5).
    var dpop: DPoPClient? = nil

    /// RFC 6749 §4.1.3 with RFC 7636 §4.5: the code and the verifier.
    func exchange(code: String, redirectURI: String, codeVerifier: String, tokenEndpoint: String) throws -> TokenResponse {
        try tokenRequest(tokenEndpoint, what: "code exchange", [
            ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirectURI),
            ("client_id", clientID), ("code_verifier", codeVerifier)])
    }

    /// RFC 6749 §6. The issuer rotates the refresh token: the reply's one
    /// replaces the stored one, which is spent from now on.
    func refresh(refreshToken: String, tokenEndpoint: String) throws -> TokenResponse {
        try tokenRequest(tokenEndpoint, what: "refresh", [
            ("grant_type", "refresh_token"), ("refresh_token", refreshToken), ("client_id", clientID)])
    }

    /// RFC 7009 §2.1. §2.2: 200 whether or not the token was live. With a
    /// key, a proof goes along: an issuer may revoke a DPoP-bound token only
    /// for its key holder (Gatehouse does for `--require-dpop` clients).
    func revoke(_ token: String, hint: String, revocationEndpoint: String) throws {
        let reply = try post(revocationEndpoint, [("token", token), ("token_type_hint", hint), ("client_id", clientID)])
        guard reply.status == 200 else { throw ToolError("revocation: \(OAuthErrorBody.summary(of: reply))") }
    }

    /// OpenID Connect RP-Initiated Logout 1.0 §2, sent directly rather than
    /// through the browser: the issuer ends the session the hint's `sid`
    /// names (and revokes what is bound to it); the browser's cookie for
    /// that session is worthless from then on.
    func endSession(idTokenHint: String, endSessionEndpoint: String) throws {
        let separator = endSessionEndpoint.contains("?") ? "&" : "?"
        let reply = try transport.get(endSessionEndpoint + separator
                                      + FormParser.encode([("id_token_hint", idTokenHint), ("client_id", clientID)]))
        guard reply.status == 200 else { throw ToolError("end session: the issuer answered HTTP \(reply.status)") }
    }

    private func tokenRequest(_ endpoint: String, what: String, _ form: [(String, String)]) throws -> TokenResponse {
        let reply = try post(endpoint, form)
        guard reply.status == 200 else {
            // RFC 6749 §5.2 invalid_grant: the code or refresh token is dead
            // (spent, revoked, expired, the session ended); only a new sign-in helps.
            let summary = OAuthErrorBody.summary(of: reply)
            let advice = summary.contains("\nYour account has been disabled") ? ""
                : summary.hasPrefix("invalid_grant") ? "\nSign in again with `gatehouse-login login`." : ""
            throw ToolError("\(what) refused: \(summary)" + advice)
        }
        let response = try reply.decode(TokenResponse.self, what: what)
        // RFC 6749 §5.1: token_type is case-insensitive. RFC 9449 §5: DPoP
        // only in answer to a proof; a server may still answer one with a
        // bearer token (the tool then presents it as one).
        switch response.tokenType.lowercased() {
        case "bearer": break
        case "dpop" where dpop != nil: break
        default: throw ToolError("\(what): unexpected token_type \(response.tokenType)")
        }
        return response
    }

    /// A form POST to one of the issuer's endpoints: with a DPoP proof (and
    /// the nonce it asks for) when this tool holds a key.
    private func post(_ endpoint: String, _ form: [(String, String)]) throws -> HTTPSResponse {
        try dpop.map { try $0.tokenRequest(endpoint, form, transport: transport) } ?? transport.postForm(endpoint, form)
    }
}
