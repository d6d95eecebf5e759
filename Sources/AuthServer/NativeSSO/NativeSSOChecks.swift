import SSOCore

/// The Native SSO processing rules (draft 07 §4.3), each its own check, run
/// in this order by TokenExchangeGrant after the request's shape passed
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
    let clients: ClientStore
    let users: UserStore
    let sessions: SSOSessionStore
    let deviceSecrets: DeviceSecretStore

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
        try checkActorBinding(request.actor, subjectToken: subjectToken)
        if case .deviceSecret(let secret) = request.actor { try checkDeviceSecret(secret, subjectToken: subjectToken) }
        let (user, session) = try checkSession(subjectToken)
        try checkNativeSSOGroup(requesting: client, original: subjectToken.clientID)
        let scope = try grantedScope(request.scope, client: client)
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
    // session the id_token names: a secret from another session (or another
    // user) proves nothing about this one.
    func checkDeviceSecret(_ secret: String, subjectToken: NativeSSOSubjectToken) throws {
        guard let record = try deviceSecrets.live(secret: secret), record.sid == subjectToken.sid else {
            throw Self.refused("the device secret is invalid, revoked or not bound to this session")
        }
    }

    // Native SSO §4.3 (paraphrased): "Verify that the session id in the
    // id_token (sid) is still valid. If the session is no longer valid, the
    // AS MUST return an error of invalid_grant." Valid here: not ended, not
    // expired, its user not disabled (SSOSessionStore.find), and the same
    // user the id_token names.
    func checkSession(_ subjectToken: NativeSSOSubjectToken) throws -> (User, SSOSession) {
        guard let session = try sessions.find(sid: subjectToken.sid), let user = try users.find(id: session.userID), !user.disabled,
              user.subject == subjectToken.subject else {
            throw Self.refused("the sign-in session has ended")
        }
        return (user, session)
    }

    // Native SSO §4.3 (paraphrased): the AS verifies that the requesting
    // client is allowed to obtain tokens from the other app's id_token,
    // i.e. both are apps of the same vendor. Here: both clients are in one
    // native-SSO group (`ssoctl client add --native-sso-group`), never nil.
    func checkNativeSSOGroup(requesting client: Client, original clientID: String) throws {
        guard let group = client.nativeSSOGroup, let original = try clients.find(clientID: clientID),
              original.nativeSSOGroup == group else {
            throw Self.refused("the ID token was not issued to an app of this client's native SSO group")
        }
    }

    // RFC 8693 §2.1: "scope OPTIONAL. A list of space-delimited,
    // case-sensitive strings, as defined in Section 3.3 of [RFC6749], that
    // allow the client to specify the desired scope of the requested
    // security token". RFC 6749 §5.2 invalid_scope: "The requested scope is
    // invalid, unknown, malformed, or exceeds the scope granted by the
    // resource owner." The original grant's scope is not in the id_token,
    // so the bound is the new client's registered scopes. Without `scope`:
    // all of them but `device_sso` (a device secret is never issued by an
    // exchange). `openid` is always granted: the response carries an id_token.
    func grantedScope(_ requested: [String]?, client: Client) throws -> [String] {
        guard client.scopes.contains("openid") else { throw OAuthError(.invalidScope, "this client may not request openid") }
        guard let requested else {
            return ["openid"] + client.scopes.filter { $0 != "openid" && $0 != "device_sso" }
        }
        guard requested.allSatisfy(client.scopes.contains) else { throw OAuthError(.invalidScope, "scope includes values this client may not request") }
        return requested.contains("openid") ? requested : ["openid"] + requested
    }
}
