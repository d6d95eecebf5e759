import IssuerStorage
import SSOCore

/// What the `subject_token` of a Native SSO exchange says, once verified.
public struct NativeSSOSubjectToken: Equatable, Sendable {
    public let subject: String
    /// The app the ID token was issued to (its single `aud`): app #1.
    public let clientID: String
    public let sid: String
    public let diHash: String?
    public let dsHash: String?
    /// Its `exp` (nil if it had none: never from this issuer).
    public let expiresAt: Int64?
}

/// Verifies app #1's ID token presented as `subject_token`.
///
/// Native SSO §4.3 (draft 07), paraphrased: the authorization server
/// validates the id_token it issued (its own signature and `iss`) before
/// relying on its `sid` and `ds_hash`. Like an `id_token_hint` (RP-Initiated
/// Logout §4: "even when the exp time has passed"), an expired ID token is
/// accepted here: app #2 may read it from the shared keychain long after
/// issue; what limits its use is the live session and the device binding,
/// both checked afterwards. (The seed profile, whose device id is no
/// secret, refuses an expired one: NativeSSOChecks.checkUnexpiredForDeviceID.) Keys: published ones, and superseded ones that left
/// the JWKS; never a retired key (IssuerSignedJWT, acceptingExpiredKeys).
public struct NativeSSOSubjectTokenVerifier {
    let idTokens: IDTokenHintVerifier

    public init(issuer: String, keys: PublishedSigningKeyCache) {
        idTokens = IDTokenHintVerifier(issuer: issuer, keys: keys)
    }

    /// Our signature, `typ`, `iss` and single audience (IDTokenHintVerifier),
    /// then what Native SSO needs beyond an id_token_hint: a session.
    public func verify(_ token: String) throws -> NativeSSOSubjectToken {
        let idToken = try idTokens.verify(token)
        // Native SSO §3.4.1: the ID token "MUST include the sid claim"; without
        // it there is no session to tie app #2's tokens to.
        guard let sid = idToken.sid, !sid.isEmpty else { throw TokenRejection(.malformed, "no sid") }
        return NativeSSOSubjectToken(subject: idToken.subject, clientID: idToken.clientID, sid: sid,
                                     diHash: idToken.diHash, dsHash: idToken.dsHash, expiresAt: idToken.expiresAt)
    }
}
