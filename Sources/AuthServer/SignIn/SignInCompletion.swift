import IssuerStorage
import SSOCore

/// Completes a pending authorization request for a user who has just
/// proved who they are, in one write unit: the proof is spent (the pending
/// request, or the password step's mark, consumed; a TOTP step raised; the
/// throttle settled), the request is checked again against the client's
/// registration as it is now, the browser's earlier session ends with
/// everything bound to it, and a new session and a code are made. Every
/// sign-in, by form or by passkey, ends here, so none can skip a rule.
public struct SignInCompletion {
    let storage: any IssuerStorage
    let sessions: SSOSessions
    let codes: AuthorizationCodes
    let pending: PendingAuthorizations
    let marks: PasswordVerifiedMarks
    let throttle: LoginThrottle
    let validator: AuthorizationRequestValidator
    let lifetimes: TokenLifetimes
    let clock: Clock

    /// What the user proved, and what completing spends.
    public enum Proof {
        /// A right password for an account without TOTP.
        case password(LoginAttempt)
        /// The password step's mark and a right TOTP code at `step`.
        case passwordAndCode(step: Int64, LoginAttempt)
        /// The password step's mark and one of the account's unused
        /// recovery codes (its hash), in place of a TOTP code.
        case passwordAndRecoveryCode(hash: [UInt8], LoginAttempt)
        /// A verified passkey assertion.
        case passkey
        /// A sign-up's verification link, used in the browser whose pending
        /// sign-in the sign-up began in (GettingIn.verify compared it): the
        /// password was chosen in this sign-in, the link proves the address.
        case verifiedAddress
        /// An upstream provider's verified ID token, returned to the
        /// browser whose trip it was (FederatedSignIn checked the binding):
        /// the pending request is the trip's, named by its hash.
        case federated(pendingHash: [UInt8])
    }

    /// The pending request's browser, for the session it makes.
    public struct Browser {
        let cookieSecret: String
        let address: String
        let userAgent: String?
    }

    public enum Outcome {
        /// `linked`: the upstream account this sign-in proved the user's
        /// own (FederatedLinkOffer), now linked.
        case signedIn(sessionSecret: String, code: String, request: AuthorizationRequest, sid: String, linked: FederatedLinkOffer?)
        /// The request's id_token_hint named someone else: it is consumed and
        /// answered with an error, and no session is made for this user.
        case otherUserThanHinted(AuthorizationRequest)
        /// The client's registration no longer allows the request (review
        /// R6): it is consumed and refused, and no session is made.
        case refusedByRegistration(AuthorizationFailure)
        /// The pending request (or the password step's mark) is gone: used
        /// by a concurrent post, or expired. Nothing changed.
        case expired
        /// The TOTP code's step was used since it was checked (RFC 6238
        /// §5.2, two posts of one code). Nothing changed.
        case codeAlreadyUsed
    }

    /// Thrown inside the write unit to roll it back with `outcome`.
    struct Abandon: Error { let outcome: Outcome }

    public func complete(user: User, amr: [String], proof: Proof, browser: Browser) throws -> Outcome {
        try complete(amr: amr, proof: proof, browser: browser) { _ in user }.outcome
    }

    /// As above, for a user found (or made) in the same write unit: a
    /// federated sign-in's account is made in the unit that spends its
    /// pending request, so a request gone (expired, used) makes none. An
    /// error thrown by `account` rolls the unit back and passes through.
    public func complete(amr: [String], proof: Proof, browser: Browser,
                         account: (any IssuerWrites) throws -> User) throws -> (outcome: Outcome, user: User?) {
        var found: User?
        do {
            let outcome: Outcome = try storage.write { tx in
                let user = try account(tx)
                found = user
                guard let consumed = try spend(proof, user: user, browser: browser, tx) else { throw Abandon(outcome: .expired) }
                let authorization = consumed.request
                // OIDC Core §3.1.2.1 id_token_hint: "If the End-User identified
                // by the ID Token is logged in or is logged in by the request,
                // then the Authorization Server returns a positive response;
                // otherwise, it SHOULD return an error, such as login_required."
                if let expected = authorization.expectedSubject, !expected.bytesEqual(user.subject) {
                    return .otherUserThanHinted(authorization)
                }
                do { try validator.recheckRegistration(authorization) } catch let failure as AuthorizationFailure {
                    return .refusedByRegistration(failure)
                }
                // The browser's earlier sign-in ends with everything bound to
                // it (its apps' refresh tokens and device secrets), as at logout.
                if let replaced = consumed.replacesSID { try SessionBoundCredentials.endSession(replaced, tx, now: clock()) }
                let (session, secret) = try sessions.create(userID: user.id, lifetime: lifetimes.ssoSession, amr: amr,
                                                            address: browser.address, userAgent: browser.userAgent, tx)
                let code = try codes.issue(AuthorizationCodeGrantRecord(
                    request: authorization, sid: session.sid, userID: user.id, authTime: session.authTime, amr: session.amr),
                    lifetime: lifetimes.authorizationCode, tx)
                return .signedIn(sessionSecret: secret, code: code, request: authorization, sid: session.sid,
                                 linked: try adoptLinkOffer(proof, user: user, browser: browser, tx))
            }
            return (outcome, found)
        } catch let abandon as Abandon {
            return (abandon.outcome, nil)
        }
    }

    /// The account's own password or passkey just completed the pending
    /// request an upstream provider's link was offered in (FederatedSignIn,
    /// "prove it's yours"): the link is made now, for this user only.
    func adoptLinkOffer(_ proof: Proof, user: User, browser: Browser, _ tx: any IssuerWrites) throws -> FederatedLinkOffer? {
        if case .federated = proof { return nil }
        let now = clock()
        guard let offer = try tx.federatedIdentities.takeLinkOffer(pendingHash: SecretHash.of(browser.cookieSecret), userID: user.id, now: now),
              try tx.federatedIdentities.find(issuer: offer.issuer, subject: offer.subject) == nil else { return nil }
        try tx.federatedIdentities.insert(FederatedIdentity(issuer: offer.issuer, subject: offer.subject, userID: user.id,
                                                            provider: offer.provider, email: offer.email, linkedAt: now, lastUsedAt: now))
        return offer
    }

    /// Spends the proof; the pending request it completes, nil when gone.
    func spend(_ proof: Proof, user: User, browser: Browser, _ tx: any IssuerWrites) throws -> PendingAuthorization? {
        switch proof {
        case .password(let attempt):
            try throttle.succeeded(attempt, tx)
            return try pending.consume(cookieSecret: browser.cookieSecret, tx)
        case .passwordAndCode(let step, let attempt):
            // RFC 6238 §5.2: one-time use, enforced atomically (two concurrent
            // posts of one code: only one raises last_used_step).
            guard try tx.totp.accept(step: step, userID: user.id) else { throw Abandon(outcome: .codeAlreadyUsed) }
            try throttle.succeeded(attempt, tx)
            return try marks.consume(cookieSecret: browser.cookieSecret, userID: user.id, tx)
        case .passwordAndRecoveryCode(let hash, let attempt):
            // Single use, atomically: of two posts of one code only one deletes its row.
            guard try tx.totp.useRecoveryCode(userID: user.id, hash: hash) else { throw Abandon(outcome: .codeAlreadyUsed) }
            try throttle.succeeded(attempt, tx)
            return try marks.consume(cookieSecret: browser.cookieSecret, userID: user.id, tx)
        case .passkey, .verifiedAddress:
            return try pending.consume(cookieSecret: browser.cookieSecret, tx)
        case .federated(let pendingHash):
            return try tx.pendingAuthorizations.consume(secretHash: pendingHash, now: clock())
        }
    }
}
