import IssuerStorage
import SSOCore

/// The account page's own client (AccountClient) redeems the code of its
/// sign-in here, in one write unit: the code is spent as at /token, but no
/// token is issued (the SSO cookie is what the page reads), so what a
/// replay would revoke names nothing.
public struct AccountCodeRedemption {
    let storage: any IssuerStorage
    let codes: AuthorizationCodes

    /// RFC 7636 §4.6, inside the atomic redemption with the client and the
    /// redirect URI; throws CodeRedemptionFailure.
    public func redeem(code: String, verifier: String, redirectURI: String) throws -> AuthorizationCodeGrantRecord {
        let issuing = CodeIssue(familyID: SecureRandom.token(byteCount: 16), jti: SecureRandom.token(byteCount: 16))
        return try storage.write { tx in
            try codes.redeem(code: code, clientID: AccountClient.id, redirectURI: redirectURI,
                             challengeFromVerifier: PKCE.s256Challenge(verifier: verifier), issuing: issuing, tx)
        }
    }
}
