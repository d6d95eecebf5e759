import IssuerStorage
import SSOCore

/// The Native SSO processing rules (draft 07 §4.3), each its own check, run
/// in the order of `run` by TokenExchangeGrant after the request's shape passed
/// (TokenExchangeRequest). They only read; every failure is an OAuthError
/// and the caller's transaction rolls back, so nothing is ever issued or
/// changed by a refused exchange.
///
/// Errors: anything wrong with the tokens, the session or the group is
/// `invalid_grant`, as Native SSO §4.3 asks for the session ("the AS MUST
/// return an error of invalid_grant", paraphrased) and as RFC 6749 §5.2
/// defines it ("The provided authorization grant ... is invalid, expired,
/// revoked ... or was issued to another client"). RFC 8693 §2.2.2 would
/// say invalid_request for an invalid subject or actor token; the profile's
/// one code for "this grant is no good" is kept for all of them.
public struct NativeSSOChecks {
    let verifier: NativeSSOSubjectTokenVerifier
    let clients: ClientRegistry
    let sessions: SSOSessions
    let deviceSecrets: DeviceSecrets
    let groups: NativeSSOGroups
    let clock: Clock

    /// What passed every check: who, in which session, for which scope.
    public struct Outcome {
        public let user: User
        public let session: SSOSession
        public let scope: [String]
    }

    static func refused(_ text: String) -> OAuthError { .invalidGrant(text) }

    /// The checks that read the database; run them inside the transaction
    /// that issues, so a logout cannot slip between check and issue.
    func run(_ request: TokenExchangeRequest, subjectToken: NativeSSOSubjectToken, client: Client) throws -> Outcome {
        try checkNotOwnIDToken(requesting: client, subjectToken: subjectToken)
        try checkActorBinding(request.actor, subjectToken: subjectToken)
        let (user, session) = try checkSession(subjectToken)
        let original = try checkNativeSSOGroup(requesting: client, original: subjectToken.clientID)
        let signIn = switch request.actor {
        case .deviceSecret(let secret): try checkDeviceSecret(secret, subjectToken: subjectToken)
        case .deviceID(let deviceID): try checkDeviceIDProfile(deviceID, subjectToken: subjectToken, group: original.nativeSSOGroup)
        }
        let scope = try grantedScope(request.scope, bound: scopeBound(signIn: signIn, original: original, requesting: client), client: client)
        return Outcome(user: user, session: session, scope: scope)
    }

    // Native SSO §4.3 (paraphrased): the id_token must be one this
    // authorization server issued. Our signature (a published or recently
    // published key) and our `iss`; see NativeSSOSubjectTokenVerifier.
    func verifySubjectToken(_ token: String) throws -> NativeSSOSubjectToken {
        do { return try verifier.verify(token) } catch is TokenRejection {
            throw Self.refused("subject_token is not a valid ID token from this issuer")
        }
    }

    // Native SSO (abstract): "a mechanism that allows a mobile app to share
    // the identity/authentication obtained by a different mobile app".
    // An app presenting its own ID token already holds its tokens (and a
    // refresh token if it was granted one); an exchange would only let it
    // re-mint them, outside rotation and reuse detection. Refused outright
    // rather than bounded: no app needs it.
    func checkNotOwnIDToken(requesting client: Client, subjectToken: NativeSSOSubjectToken) throws {
        guard client.clientID != subjectToken.clientID else { throw Self.refused("an app cannot exchange its own ID token") }
    }

    // Native SSO §4.3 (paraphrased): "Verify the binding between the
    // subject_token and the device_secret": the `ds_hash` claim of the
    // id_token must be the hash of the actor_token. The seed profile binds
    // the same way with `di_hash` and the device_id. Constant time.
    func checkActorBinding(_ actor: TokenExchangeRequest.Actor, subjectToken: NativeSSOSubjectToken) throws {
        let (value, claim) = switch actor {
        case .deviceSecret(let secret): (secret, subjectToken.dsHash)
        case .deviceID(let deviceID): (deviceID, subjectToken.diHash)
        }
        guard let claim, NativeSSOHash.matches(value, claim: claim) else {
            throw Self.refused("the actor_token does not match the ID token")
        }
    }

    // Native SSO §4.3 (paraphrased): "Validate the device_secret to ensure
    // it is still valid" (not expired or revoked), and it must belong to the
    // session the id_token names and the app it was issued with: a secret
    // from another session (or another user) proves nothing about this one.
    // Its row also says what that sign-in granted (scopeBound).
    func checkDeviceSecret(_ secret: String, subjectToken: NativeSSOSubjectToken) throws -> DeviceSecretRecord {
        guard let record = try deviceSecrets.live(secret: secret), record.sid.bytesEqual(subjectToken.sid),
              record.clientID.bytesEqual(subjectToken.clientID) else {
            throw Self.refused("the device secret is invalid, revoked or not bound to this session")
        }
        return record
    }

    /// The seed profile (Native SSO draft 00–03: the device id as actor
    /// token, bound by `di_hash`). A device id is an identifier, not a
    /// secret, so it counts only where it was switched on, only with a
    /// fresh ID token, and only for a sign-in that granted `device_sso`.
    func checkDeviceIDProfile(_ deviceID: String, subjectToken: NativeSSOSubjectToken, group: String?) throws -> DeviceSecretRecord {
        try checkDeviceIDProfileSwitchedOn(group: group)
        try checkUnexpiredForDeviceID(subjectToken)
        return try checkDeviceIDSignIn(deviceID, subjectToken: subjectToken)
    }

    // Native SSO draft 07 §3.2 (paraphrased): the device_secret is an opaque
    // value the AS issues and protects; the seed drafts' device id, which
    // it replaced, is chosen and known by the apps. So the seed profile is
    // an opt-in per group, off unless an administrator switched it on
    // (`ssoctl client group NAME --allow-device-id`; NativeSSOGroups,
    // read per request).
    func checkDeviceIDProfileSwitchedOn(group: String?) throws {
        guard try groups.allowsDeviceID(group: group) else {
            throw Self.refused("the device_id profile is not switched on for this native SSO group")
        }
    }

    // OIDC Core §3.1.3.7 step 9: "The current time MUST be before the time
    // represented by the exp Claim". The device-secret profile accepts an
    // expired ID token (the secret is the proof); with a device id, which
    // anyone on the device may know, the ID token is the only credential
    // that ages, so its `exp` holds.
    func checkUnexpiredForDeviceID(_ subjectToken: NativeSSOSubjectToken) throws {
        guard let expiresAt = subjectToken.expiresAt, clock() < expiresAt else {
            throw Self.refused("the ID token has expired; the device_id profile needs an unexpired one")
        }
    }

    // Native SSO §3.1 (paraphrased): the device_sso scope is how app #1
    // asks to take part in Native SSO; without it there is nothing to
    // share. A sign-in that granted it left a device secret row recording
    // the device id app #1 sent: the presented device id must be that one,
    // on a live row of the ID token's session and app.
    func checkDeviceIDSignIn(_ deviceID: String, subjectToken: NativeSSOSubjectToken) throws -> DeviceSecretRecord {
        guard let record = try deviceSecrets.newestLive(sid: subjectToken.sid, clientID: subjectToken.clientID, deviceID: deviceID) else {
            throw Self.refused("no live device_sso sign-in with this device id in the ID token's session")
        }
        return record
    }

    // Native SSO §4.3 (paraphrased): "Verify that the session id in the
    // id_token (sid) is still valid. If the session is no longer valid, the
    // AS MUST return an error of invalid_grant." Valid here: not ended, not
    // expired, its user not disabled (SSOSessions.liveSignIn), and the
    // same user the id_token names (byte for byte).
    func checkSession(_ subjectToken: NativeSSOSubjectToken) throws -> (User, SSOSession) {
        guard let signIn = try sessions.liveSignIn(sid: subjectToken.sid), signIn.user.subject.bytesEqual(subjectToken.subject) else {
            throw Self.refused("the sign-in session has ended")
        }
        return (signIn.user, signIn.session)
    }

    // Native SSO §4.3 (paraphrased): the AS verifies that the requesting
    // client is allowed to obtain tokens from the other app's id_token,
    // i.e. both are apps of the same vendor. Here: both clients are in one
    // native-SSO group (`ssoctl client add --native-sso-group`), never nil.
    // Returns the original app's registration (scopeBound needs it).
    func checkNativeSSOGroup(requesting client: Client, original clientID: String) throws -> Client {
        guard let group = client.nativeSSOGroup, let original = try clients.find(clientID: clientID),
              original.nativeSSOGroup == group else {
            throw Self.refused("the ID token was not issued to an app of this client's native SSO group")
        }
        return original
    }
}
