import IssuerStorage
import SSOCore

/// `grant_type=refresh_token` (RFC 6749 §6) with rotation (RFC 9700 §4.14.2).
public struct RefreshTokenGrant {
    /// The grant's only writer: it reads the rest.
    let rotation: RefreshTokenRotation
    let sessions: SSOSessions
    let users: UserAccounts
    let deviceSecrets: DeviceSecrets
    let apis: APIRegistry
    let tokenIssuer: TokenIssuer
    let deviceIDBinding: DeviceIDBinding
    let issuer: String
    let lifetimes: TokenLifetimes

    /// `dpopJKT`: the key of the request's checked DPoP proof, if any;
    /// `ip`: the client's address (audit events).
    public func handle(_ form: FormParameters, client: Client, dpopJKT: String? = nil, ip: String = "") throws -> TokenResponseBody {
        // RFC 6749 §5.2 unauthorized_client.
        guard client.allows(grantType: "refresh_token") else {
            var error = OAuthError(.unauthorizedClient, "this client may not use the refresh_token grant")
            error.reason = .clientChanged
            throw error
        }
        guard let token = try form.single("refresh_token") else { throw OAuthError.invalidRequest("refresh_token is required") }
        let requested = try form.single("scope").map(ScopeParameter.parse)
        let resources = try ResourceIndicator.parse(form)
        let apis = try self.apis.all()
        // What the family's scope still means now: a scope the client is no
        // longer registered for, or whose API was removed, is not issued
        // again (an administrator's change takes effect at the next refresh).
        func current(_ scope: [String]) -> [String] {
            scope.filter { token in client.scopes.containsBytes(token) && apis.isKnown(token) }
        }
        let deviceID = try DeviceIDParameter.parse(form)
        let presentedDeviceSecret = try form.single("device_secret")
        // RFC 6749 §6: "The requested scope MUST NOT include any scope not
        // originally granted by the resource owner, and if omitted is treated
        // as equal to the scope originally granted." Checked before rotation.
        let outcome = try rotation.present(token, clientID: client.clientID, lifetime: lifetimes.refreshToken(for: client),
                                           gracePeriod: lifetimes.refreshGracePeriod,
                                           binding: DPoPBinding.refreshTokenKey(dpopJKT, client: client),
                                           accessTokenLifetime: lifetimes.accessToken) { presented in
            // Before anything else, and before a spent token's reuse revokes
            // its family: without the key, a copied token changes nothing.
            try DPoPBinding.check(presented: dpopJKT, boundTo: presented.dpopJKT, what: "refresh token")
            if let requested, let wider = requested.first(where: { !current(presented.scope).containsBytes($0) }) {
                throw OAuthError(.invalidScope, "\(ScopeParameter.named(wider)) exceeds the original grant",
                                 detail: "refresh asked for scope \(wider.debugDescription), not in family \(presented.familyID) as it stands")
            }
            // RFC 8707 §2.2: checked before the rotation commits.
            let scope = requested.map { requested in current(presented.scope).filter(requested.containsBytes) } ?? current(presented.scope)
            _ = try TokenTarget.select(scope: scope, resources: resources, apis: apis, issuer: issuer)
        }
        let successor: String, record: RefreshTokenRecord
        switch outcome {
        case .rotated(let token, let issued): (successor, record) = (token, issued)
        case .replayed(let token, let issued):
            // The successor may be bound although the spent token was not
            // (its rotation carried the app's first proof): the retry must
            // then come with that key, or it would hand a bearer access
            // token to whoever copied the spent, unbound token.
            try DPoPBinding.check(presented: dpopJKT, boundTo: issued.dpopJKT, what: "refresh token")
            (successor, record) = (token, issued)
            SecurityEvents.refreshGraceRetry()
        case .refused(let why, let refusal):
            throw Self.refused(refusal, detail: "refresh refused: \(why)")
        case .reuseDetected(let familyID, let userID):
            SecurityEvents.refreshReuseDetected(user: try? users.find(id: userID)?.email, client: client.clientID, ip: ip,
                                                familyID: familyID)
            throw Self.refused(.refreshTokenReused, detail: "refresh token reuse detected; family \(familyID) revoked, its session ended")
        }
        let scope = requested.map { requested in current(record.scope).filter(requested.containsBytes) } ?? current(record.scope)
        let target = try TokenTarget.select(scope: scope, resources: resources, apis: apis, issuer: issuer)
        let accessTokenLifetime = lifetimes.accessToken(for: client)
        guard let signIn = try sessions.liveSignIn(sid: record.sid), signIn.user.id == record.userID else {
            // The session ended, or the account was disabled, since the
            // rotation's write unit committed.
            throw Self.refused(RefreshRefusal.of(try sessions.listing(sid: record.sid)), detail: "the user can no longer sign in")
        }
        let (user, session) = (signIn.user, signIn.session)
        // OIDC Core §12.2: the new ID token keeps sub, aud and the original
        // auth_time; it carries no nonce (none was sent with this request).
        var grant = TokenGrant(user: user, clientID: client.clientID, scope: scope, sid: record.sid, authTime: record.authTime,
                               nonce: nil, jti: SecureRandom.token(byteCount: 16), amr: session.amr, target: target,
                               accessTokenLifetime: accessTokenLifetime, confirmationJKT: dpopJKT)
        let deviceSecret = try deviceSecret(presented: presentedDeviceSecret, record: record, clientID: client.clientID)
        grant.dsHash = deviceSecret.record?.dsHash
        grant.grantID = record.familyID
        grant.clientRegistration = client.registrationID
        grant.diHash = try diHash(deviceID: deviceID, deviceSecret: deviceSecret.record, record: record, client: client)
        let tokens = try tokenIssuer.sign(grant)
        var body = TokenResponseBody(access_token: tokens.accessToken, token_type: TokenResponseBody.tokenType(boundTo: dpopJKT),
                                     expires_in: accessTokenLifetime,
                                     refresh_token: successor, id_token: tokens.idToken, scope: target.scope.joined(separator: " "))
        body.device_secret = deviceSecret.echoed
        // The successor's own expiry (a grace retry's is a few seconds nearer).
        body.refresh_token_expires_in = max(0, Int(record.expiresAt - tokenIssuer.clock()))
        return body
    }

    /// RFC 6749 §5.2 invalid_grant, with the `reason` an app acts on.
    static func refused(_ refusal: RefreshRefusal, detail: String) -> OAuthError {
        var error = OAuthError.invalidGrant("the refresh token is invalid, expired or revoked", detail: detail)
        error.reason = refusal
        return error
    }

    /// The seed profile's `di_hash` on a refreshed ID token: where the code
    /// grant would put it (DeviceIDBinding, judged on the refresh token's
    /// original scope), and only for the device id the sign-in recorded with
    /// the device secret whose `ds_hash` this ID token carries. Any other
    /// device id could never pass a token exchange (NativeSSOChecks), so it
    /// is not put into an ID token either.
    func diHash(deviceID: String?, deviceSecret: DeviceSecretRecord?, record: RefreshTokenRecord, client: Client) throws -> String? {
        guard let deviceID, deviceSecret?.deviceID == deviceID else { return nil }
        return try deviceIDBinding.diHash(deviceID: deviceID, grantedScope: record.scope, client: client)
    }

    /// Native SSO §3.4.3 lets a refresh return the same device secret or a
    /// new one. Gatehouse never rotates it and holds it only as a hash, so:
    /// the new ID token keeps `ds_hash` of the newest live secret this client
    /// got in this session (computed from the stored hash), and the response
    /// carries `device_secret` only when the client sent it (`device_secret`
    /// in the request, Native SSO §3.3) and it is that session's and this
    /// client's live secret: the same value back. An unknown one is ignored.
    func deviceSecret(presented: String?, record: RefreshTokenRecord, clientID: String) throws
        -> (record: DeviceSecretRecord?, echoed: String?) {
        guard record.scope.contains("device_sso") else { return (nil, nil) }
        if let presented, let live = try deviceSecrets.live(secret: presented), live.sid.bytesEqual(record.sid), live.clientID.bytesEqual(clientID) {
            return (live, presented)
        }
        return (try deviceSecrets.newestLive(sid: record.sid, clientID: clientID), nil)
    }
}
