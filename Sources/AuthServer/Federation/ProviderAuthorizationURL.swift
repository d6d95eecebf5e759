import IssuerStorage
import SSOCore

/// The authorization request the issuer sends a user's browser to at an
/// upstream provider: the code flow with PKCE (RFC 7636, S256 only, as the
/// issuer demands of its own clients), `state` and `nonce` (OIDC Core
/// §3.1.2.1), and the preset's quirks.
public enum ProviderAuthorizationURL {
    /// `state`, `nonce` and `codeChallenge` are the federation request's
    /// (fresh and random for each); `redirectURI` is
    /// IdentityProviderRegistry.redirectURI of this issuer.
    public static func make(provider: IdentityProvider, redirectURI: String, state: String, nonce: String, codeChallenge: String,
                            loginHint: String? = nil, reauthenticate: Bool = false) -> String {
        var parameters: [(String, String)] = [
            ("response_type", "code"), ("client_id", provider.clientID), ("redirect_uri", redirectURI),
            ("scope", provider.scopes.joined(separator: " ")), ("state", state), ("nonce", nonce),
            ("code_challenge", codeChallenge), ("code_challenge_method", "S256"),
        ]
        // Apple: "If you requested any scopes, the value must be form_post"
        // (Sign in with Apple REST API, "Request an authorization").
        if provider.preset == .apple { parameters.append(("response_mode", "form_post")) }
        // Google: `hd` narrows the account chooser to the Workspace domain;
        // the ID token's `hd` claim is what is checked, not this.
        if provider.preset == .google, let domain = provider.hostedDomain { parameters.append(("hd", domain)) }
        if let loginHint { parameters.append(("login_hint", loginHint)) }
        // The app asked for a fresh sign-in (prompt=login, max_age): an
        // upstream session alone must not satisfy it (OIDC Core §3.1.2.1).
        if reauthenticate { parameters.append(("prompt", "login")) }
        let separator = provider.endpoints.authorization.contains("?") ? "&" : "?"
        return provider.endpoints.authorization + separator + FormParser.encode(parameters)
    }
}
