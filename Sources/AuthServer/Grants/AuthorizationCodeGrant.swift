import IssuerStorage
import SSOCore

/// `grant_type=authorization_code` (RFC 6749 §4.1.3, RFC 7636 §4.5–4.6).
public struct AuthorizationCodeGrant {
    let storage: any IssuerStorage
    let codes: AuthorizationCodes
    let refreshTokens: RefreshTokens
    let deviceSecrets: DeviceSecrets
    let apis: APIRegistry
    let tokenIssuer: TokenIssuer
    let deviceIDBinding: DeviceIDBinding
    let issuer: String
    let lifetimes: TokenLifetimes
    let clock: Clock

    /// `dpopJKT`: the key of the request's checked DPoP proof, if any.
    public func handle(_ form: FormParameters, client: Client, dpopJKT: String? = nil) throws -> TokenResponseBody {
        // RFC 6749 §5.2 unauthorized_client: "The authenticated client is
        // not authorized to use this authorization grant type."
        guard client.allows(grantType: "authorization_code") else {
            throw OAuthError(.unauthorizedClient, "this client may not use the authorization_code grant")
        }
        guard let code = try form.single("code") else { throw OAuthError.invalidRequest("code is required") }
        // RFC 6749 §4.1.3: redirect_uri REQUIRED if it was in the
        // authorization request (OIDC makes it required there, so here too).
        guard let redirectURI = try form.single("redirect_uri") else { throw OAuthError.invalidRequest("redirect_uri is required") }
        guard let verifier = try form.single("code_verifier") else { throw OAuthError.invalidRequest("code_verifier is required (PKCE)") }
        // RFC 7636 §4.1: code-verifier = 43*128unreserved.
        guard PKCE.isValidVerifier(verifier) else { throw OAuthError.invalidRequest("code_verifier must be 43 to 128 unreserved characters") }
        guard code.utf8.count <= 128 else { throw OAuthError.invalidGrant("the code is unknown", detail: "code longer than 128 bytes") }
        // Native SSO seed profile: the device id the ID token may get bound
        // to (di_hash; DeviceIDBinding decides).
        let deviceID = try DeviceIDParameter.parse(form)
        let resources = try ResourceIndicator.parse(form)
        let apis = try self.apis.all()

        let jti = SecureRandom.token(byteCount: 16)
        // Chosen before the redemption, which records both (a proven replay
        // revokes them); the family stays empty without offline_access.
        let issuing = CodeIssue(familyID: SecureRandom.token(byteCount: 16), jti: jti)
        let issued: (record: AuthorizationCodeGrantRecord, user: User, refreshToken: String?, deviceSecret: String?, target: TokenTarget)
        do {
            issued = try storage.write { tx in
                // RFC 7636 §4.6: BASE64URL-ENCODE(SHA256(ASCII(code_verifier))) == code_challenge,
                // checked inside the atomic redemption together with client and redirect URI.
                let record = try codes.redeem(code: code, clientID: client.clientID, redirectURI: redirectURI,
                                                       challengeFromVerifier: PKCE.s256Challenge(verifier: verifier), issuing: issuing, tx)
                // The session and its user in one read: a disabled user's
                // sessions are not live (SSOSessionReads).
                guard let signIn = try tx.sessions.liveSignIn(sid: record.sid, now: clock()), signIn.user.id == record.userID else {
                    throw OAuthError.invalidGrant("the sign-in session has ended",
                                                  detail: "session ended or expired, or user \(record.userID) disabled or gone")
                }
                let (user, session) = (signIn.user, signIn.session)
                try DPoPBinding.check(presented: dpopJKT, boundTo: record.dpopJKT, what: "code")
                // RFC 8707 §2.2: resource at the token endpoint narrows this
                // access token; a wrong one rolls the redemption back.
                let target = try TokenTarget.select(scope: record.scope, resources: resources, apis: apis, issuer: issuer)
                var refreshToken: String?
                // OIDC Core §11: refresh tokens only with offline_access.
                if record.scope.contains("offline_access") && client.allows(grantType: "refresh_token") {
                    refreshToken = try refreshTokens.issue(familyID: issuing.familyID, clientID: client.clientID, userID: user.id,
                                                                    sid: record.sid, scope: record.scope, authTime: record.authTime,
                                                                    lifetime: lifetimes.refreshToken(for: client),
                                                                    dpopJKT: DPoPBinding.refreshTokenKey(dpopJKT, client: client), tx).token
                }
                // Native SSO §3.1: with the device_sso scope "the Authorization
                // Server ... return[s] a device_secret" (paraphrased), bound to
                // this session; it lives no longer than the session. It records
                // what this sign-in granted: a token exchange never gets more.
                let deviceSecret = record.scope.contains("device_sso")
                    ? try deviceSecrets.issue(sid: record.sid, userID: user.id, clientID: client.clientID, deviceID: deviceID,
                                                       scope: record.scope, codeHash: SecretHash.of(code), expiresAt: session.expiresAt, tx).secret
                    : nil
                return (record, user, refreshToken, deviceSecret, target)
            }
        } catch let failure as CodeRedemptionFailure {
            if case .reused(let familyID, let previousJTI) = failure { try revokeWhatTheFirstUseIssued(code, familyID, previousJTI) }
            throw Self.error(for: failure, clientID: client.clientID)
        }
        let accessTokenLifetime = lifetimes.accessToken(for: client)
        var grant = TokenGrant(user: issued.user, clientID: client.clientID, scope: issued.record.scope, sid: issued.record.sid,
                               authTime: issued.record.authTime, nonce: issued.record.nonce, jti: jti, amr: issued.record.amr,
                               target: issued.target, accessTokenLifetime: accessTokenLifetime, confirmationJKT: dpopJKT)
        // Native SSO §3.4.1: ds_hash and sid bind the ID token to the device
        // secret; the seed profile's di_hash to the device id, where allowed.
        grant.dsHash = issued.deviceSecret.map(NativeSSOHash.of)
        grant.grantID = issuing.familyID
        grant.clientRegistration = client.registrationID
        grant.diHash = try deviceIDBinding.diHash(deviceID: deviceID, grantedScope: issued.record.scope, client: client)
        let tokens = try tokenIssuer.sign(grant)
        var body = TokenResponseBody(access_token: tokens.accessToken, token_type: TokenResponseBody.tokenType(boundTo: dpopJKT),
                                     expires_in: accessTokenLifetime,
                                     refresh_token: issued.refreshToken, id_token: tokens.idToken, scope: issued.target.scope.joined(separator: " "))
        body.device_secret = issued.deviceSecret
        // Issued in this request: its whole lifetime is ahead.
        body.refresh_token_expires_in = issued.refreshToken.map { _ in lifetimes.refreshToken(for: client) }
        return body
    }

    /// RFC 6749 §4.1.2: a proven replay revokes the refresh token family
    /// with its access tokens, the device secrets and the access token the
    /// first use issued.
    func revokeWhatTheFirstUseIssued(_ code: String, _ familyID: String?, _ previousJTI: String?) throws {
        let now = clock()
        try storage.write { tx in
            if let familyID {
                try GrantRevocation.revoke(familyID: familyID, accessTokenLifetime: lifetimes.accessToken, tx, now: now)
            }
            try tx.deviceSecrets.revokeAll(issuedByCodeHash: SecretHash.of(code), at: now)
            if let previousJTI {
                try tx.revokedAccessTokens.revoke(jti: previousJTI, expiresAt: now + Int64(lifetimes.accessToken))
            }
        }
    }

    /// RFC 6749 §5.2 invalid_grant for each, with a description that names
    /// the mistake in what the caller sent (the classic four: wrong
    /// redirect_uri, wrong verifier, another client's code, a spent or
    /// expired code) and a log line that says exactly what happened.
    static func error(for failure: CodeRedemptionFailure, clientID: String) -> OAuthError {
        switch failure {
        case .unknown:
            .invalidGrant("the code is unknown", detail: "code unknown (never issued, or swept after expiry)")
        case .expired:
            .invalidGrant("the code has expired", detail: "code expired before redemption")
        case .otherClient:
            .invalidGrant("the code was issued to another client", detail: "code presented by \(clientID), issued to another client")
        case .wrongRedirectURI:
            .invalidGrant("redirect_uri does not match the authorization request",
                          detail: "code presented with another redirect_uri; code still usable")
        case .wrongVerifier:
            .invalidGrant("code_verifier does not match the code_challenge", detail: "PKCE verification failed; code still usable")
        case .reused:
            .invalidGrant("the code was already used",
                          detail: "code reused with the right client, redirect_uri and verifier; what its first use issued is revoked")
        case .reusedWithoutProof:
            .invalidGrant("the code was already used",
                          detail: "spent code presented without proof of possession; nothing revoked")
        }
    }
}
