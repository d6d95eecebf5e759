import IssuerStorage
import SSOCore

extension AuthorizationCodeGrantRecord {
    /// The code for a validated request, in a session: everything the
    /// request bound it to (client, redirect URI, PKCE challenge, scope,
    /// nonce, RFC 9449 §10 `dpop_jkt`) goes with it.
    public init(request: AuthorizationRequest, sid: String, userID: Int64, authTime: Int64, amr: [String]) {
        self.init(clientID: request.clientID, redirectURI: request.redirectURI, codeChallenge: request.codeChallenge, scope: request.scope,
                  nonce: request.nonce, sid: sid, userID: userID, authTime: authTime, amr: amr)
        dpopJKT = request.dpopJKT
    }

    /// OIDC Core §2 acr for the ID token.
    public var acr: String? { AuthenticationMethods.acr(for: amr) }
}

/// Why a code could not be redeemed, told apart for the log and for the
/// error_description (each names a mistake in what the caller itself sent).
public enum CodeRedemptionFailure: Error, Equatable {
    case unknown
    case expired
    /// Issued to another client.
    case otherClient
    /// redirect_uri differs from the authorization request's.
    case wrongRedirectURI
    /// code_verifier does not hash to the code_challenge.
    case wrongVerifier
    /// Redeemed before, and presented again with everything right (client,
    /// redirect URI, verifier): the first redemption's holder is replaying
    /// it, or someone who holds the verifier too. What that use issued must
    /// be revoked (RFC 6749 §4.1.2).
    case reused(familyID: String?, jti: String?)
    /// Redeemed before, presented again without the proof (another client,
    /// a wrong redirect URI or verifier): refused, and nothing is revoked,
    /// or anyone who saw a used code (browser history, the interstitial
    /// page) could end its owner's tokens.
    case reusedWithoutProof
}

/// One-time authorization codes, stored as hashes, valid for 60 s.
public final class AuthorizationCodes {
    let clock: Clock

    public init(clock: @escaping Clock = systemClock) { self.clock = clock }

    /// Issues a code in the caller's write unit; returns the code itself
    /// (shown once, to the client).
    public func issue(_ record: AuthorizationCodeGrantRecord, lifetime: Int, _ tx: any IssuerWrites) throws -> String {
        let code = SecureRandom.token()
        let now = clock()
        try tx.authorizationCodes.insert(codeHash: SecretHash.of(code), record, createdAt: now, expiresAt: now + Int64(lifetime))
        return code
    }

    /// Redeems a code in one atomic statement that also checks the client,
    /// the redirect URI and the PKCE challenge, so a wrong verifier or a
    /// wrong client changes nothing and the code stays usable by its owner,
    /// while two concurrent redemptions can never both succeed.
    /// `issuing` is recorded with the redemption, for revocation on reuse.
    public func redeem(code: String, clientID: String, redirectURI: String, challengeFromVerifier: String, issuing: CodeIssue,
                       _ tx: any IssuerWrites) throws -> AuthorizationCodeGrantRecord {
        switch try tx.authorizationCodes.redeem(codeHash: SecretHash.of(code), clientID: clientID, redirectURI: redirectURI,
                                                codeChallenge: challengeFromVerifier, now: clock(), issuing: issuing) {
        case .redeemed(let record):
            // Back-Channel Logout §2.7: this client now has tokens of the
            // session, and is told when it ends (even after the code is swept).
            try tx.sessions.recordClient(clientID, sid: record.sid)
            return record
        case .refused(nil): throw CodeRedemptionFailure.unknown
        case .refused(let existing?): throw Self.explain(existing, clientID: clientID, redirectURI: redirectURI,
                                                         challengeFromVerifier: challengeFromVerifier, now: clock())
        }
    }

    /// Why a code that exists was not redeemed.
    static func explain(_ code: UnredeemedCode, clientID: String, redirectURI: String, challengeFromVerifier: String,
                        now: Int64) -> CodeRedemptionFailure {
        let proves = code.clientID.bytesEqual(clientID) && code.redirectURI.bytesEqual(redirectURI)
            && ConstantTime.equals(Array(code.codeChallenge.utf8), Array(challengeFromVerifier.utf8))
        if code.usedAt != nil {
            // RFC 6749 §4.1.2: "If an authorization code is used more than once,
            // the authorization server MUST deny the request and SHOULD revoke
            // (when possible) all tokens previously issued based on that code."
            // Only a presentation that proves possession (the client, redirect
            // URI and verifier of the first use) can trigger that.
            return proves ? .reused(familyID: code.issuedFamilyID, jti: code.issuedJTI) : .reusedWithoutProof
        }
        if code.expiresAt <= now { return .expired }
        if !code.clientID.bytesEqual(clientID) { return .otherClient }
        if !code.redirectURI.bytesEqual(redirectURI) { return .wrongRedirectURI }
        return .wrongVerifier
    }
}
