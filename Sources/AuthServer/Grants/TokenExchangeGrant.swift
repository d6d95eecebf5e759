import IssuerStorage
import SSOCore

/// `grant_type=urn:ietf:params:oauth:grant-type:token-exchange` (RFC 8693)
/// in the OpenID Connect Native SSO for Mobile Apps profile: app #2 presents
/// app #1's ID token (`subject_token`) and the device secret or device id
/// bound to it (`actor_token`) and gets tokens of its own in the same SSO
/// session, without a browser.
///
/// The scope is never more than app #1's sign-in granted, nor more than
/// app #2 is registered for (NativeSSOChecks.scopeBound). The issued
/// refresh token (only when `offline_access` is within that bound and
/// granted, and app #2 is registered for the refresh_token grant, as for
/// the code grant, OIDC Core §11) is bound to the same
/// `sid`, so ending that session (logout, `ssoctl sessions revoke`,
/// password change, disabling) revokes app #2's tokens with app #1's.
public struct TokenExchangeGrant {
    let checks: NativeSSOChecks
    let storage: any IssuerStorage
    let refreshTokens: RefreshTokens
    let apis: APIRegistry
    let tokenIssuer: TokenIssuer
    let issuer: String
    let lifetimes: TokenLifetimes

    /// `dpopJKT`: the key of the request's checked DPoP proof, if any;
    /// `ip`: the client's address (audit events).
    public func handle(_ form: FormParameters, client: Client, dpopJKT: String? = nil, ip: String = "") throws -> TokenResponseBody {
        let request = try TokenExchangeRequest.parse(form, issuer: issuer)
        // Signature first, outside the write transaction (it reads keys only).
        let subjectToken = try checks.verifySubjectToken(request.subjectToken)
        let familyID = SecureRandom.token(byteCount: 16)
        let issued = try storage.write { tx -> (NativeSSOChecks.Outcome, String?) in
            let outcome = try checks.run(request, subjectToken: subjectToken, client: client)
            // Back-Channel Logout §2.7: app #2 is told when the session ends.
            try tx.sessions.recordClient(client.clientID, sid: outcome.session.sid)
            guard outcome.scope.containsBytes("offline_access"), client.allows(grantType: "refresh_token") else { return (outcome, nil) }
            let refresh = try refreshTokens.issue(familyID: familyID, clientID: client.clientID, userID: outcome.user.id,
                                                           sid: outcome.session.sid, scope: outcome.scope, authTime: outcome.session.authTime,
                                                           lifetime: lifetimes.refreshToken(for: client),
                                                           dpopJKT: DPoPBinding.refreshTokenKey(dpopJKT, client: client), tx)
            return (outcome, refresh.token)
        }
        let (outcome, refreshToken) = issued
        // Native SSO §4.4: the id_token is app #2's own (aud = app #2), in
        // the same session (sid), with the session's auth_time and amr.
        let target = try TokenTarget.select(scope: outcome.scope, resources: nil, apis: apis.all(), issuer: issuer)
        let accessTokenLifetime = lifetimes.accessToken(for: client)
        var grant = TokenGrant(user: outcome.user, clientID: client.clientID, scope: outcome.scope, sid: outcome.session.sid,
                               authTime: outcome.session.authTime, nonce: nil, jti: SecureRandom.token(byteCount: 16), amr: outcome.session.amr,
                               target: target, accessTokenLifetime: accessTokenLifetime, confirmationJKT: dpopJKT)
        grant.grantID = familyID
        grant.clientRegistration = client.registrationID
        let tokens = try tokenIssuer.sign(grant)
        // RFC 8693 §2.2.1: "issued_token_type REQUIRED"; "token_type REQUIRED
        // ... If the issued token is an access token ... the value of this
        // parameter MUST be ... Bearer".
        var body = TokenResponseBody(access_token: tokens.accessToken, token_type: TokenResponseBody.tokenType(boundTo: dpopJKT),
                                     expires_in: accessTokenLifetime,
                                     refresh_token: refreshToken, id_token: tokens.idToken, scope: outcome.scope.joined(separator: " "))
        body.issued_token_type = TokenExchangeRequest.accessTokenType
        body.refresh_token_expires_in = refreshToken.map { _ in lifetimes.refreshToken(for: client) }
        SecurityEvents.tokenExchange(user: outcome.user.email, client: client.clientID, fromClient: subjectToken.clientID, ip: ip,
                                     sid: outcome.session.sid)
        return body
    }
}
