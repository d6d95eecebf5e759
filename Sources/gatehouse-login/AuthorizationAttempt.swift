import SSOCore

/// One sign-in attempt: the PKCE verifier (RFC 7636), the state (RFC 6749
/// §10.12) and the nonce (OIDC Core §3.1.2.1) it was started with, and the
/// loopback redirect URI the browser will come back to; with DPoP, the key
/// the code is bound to (RFC 9449 §10), as the verifier is to the challenge.
struct AuthorizationAttempt {
    let clientID: String
    var dpop: DPoPClient? = nil
    let redirectURI: String
    let scope: String
    let prompt: String?
    let codeVerifier = PKCE.makeVerifier()
    let state = SecureRandom.token(byteCount: 16)
    let nonce = SecureRandom.token(byteCount: 16)

    /// The authorization request (RFC 6749 §4.1.1), sent by the browser.
    func url(authorizationEndpoint: String) -> String {
        var parameters = [("response_type", "code"), ("client_id", clientID), ("redirect_uri", redirectURI), ("scope", scope),
                          ("state", state), ("nonce", nonce),
                          ("code_challenge", PKCE.s256Challenge(verifier: codeVerifier)), ("code_challenge_method", "S256")]
        if let prompt { parameters.append(("prompt", prompt)) }
        if let dpop { parameters.append(("dpop_jkt", dpop.signer.thumbprint)) }
        let separator = authorizationEndpoint.contains("?") ? "&" : "?"
        return authorizationEndpoint + separator + FormParser.encode(parameters)
    }
}
