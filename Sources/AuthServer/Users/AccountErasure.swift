import IssuerStorage

/// What erasing an account deleted, row counts by kind.
public struct ErasedAccount: Equatable, Sendable {
    /// The account as it was (its `sub` is never given to anyone again).
    public let user: User
    /// Sessions that were live until the erasure.
    public let endedSessions: Int
    public let sessions: Int
    public let refreshTokens: Int
    public let deviceSecrets: Int
    public let authorizationCodes: Int
    public let pendingAuthorizations: Int
    public let totp: Bool
    /// Passkeys (WebAuthn credentials) deleted.
    public let passkeys: Int
}

extension AccountChanges {
    /// Erases the account: in one write unit, its SSO sessions end and are
    /// deleted with everything that names the user (refresh tokens, device
    /// secrets, authorization codes, pending sign-ins verified for the user
    /// or bound to its `sub` by an id_token_hint, the TOTP seed, the
    /// passkeys, the account's throttle counter), then the user row (the
    /// WebAuthn challenges issued to it go with it: ON DELETE CASCADE).
    /// Sessions go before the user: `sso_sessions.user_id` references
    /// `users(id)`.
    ///
    /// The running responders refuse what the user held at once, with no
    /// cache to expire: a refresh token or code is unknown (`invalid_grant`),
    /// a device secret too, and an access token names a `sub` that no longer
    /// exists and a session that is gone (IssuerAccessTokenVerifier), so
    /// userinfo and introspection refuse it. The resource servers, which
    /// validate offline, honour it until it expires, as after any
    /// revocation. An account added later with the same address gets a new
    /// random `sub`, and nothing of the old one.
    @discardableResult
    /// `expecting` sees the account first, after every other
    /// administrative change has finished, and may refuse it (a stale
    /// `If-Match`, or not the account the caller meant).
    public func delete(email: String, expecting: (User) throws -> Void = { _ in }) throws -> ErasedAccount {
        let now = clock()
        return try storage.write { tx in
            try tx.serializeAdministrativeChanges()
            let user = try UserAccounts.existing(email: email, in: tx.users)
            try expecting(user)
            let ended = try tx.sessions.endAll(userID: user.id, at: now, reason: .userDisabled)
            // Told before the rows go: the notice keeps the subject and sid.
            for sid in ended { try BackchannelLogoutQueue.notify(endedSID: sid, reason: .userDisabled, tx, now: now) }
            let erased = ErasedAccount(
                user: user, endedSessions: ended.count,
                sessions: try tx.sessions.deleteAll(userID: user.id),
                refreshTokens: try tx.refreshTokens.deleteAll(userID: user.id),
                deviceSecrets: try tx.deviceSecrets.deleteAll(userID: user.id),
                authorizationCodes: try tx.authorizationCodes.deleteAll(userID: user.id),
                pendingAuthorizations: try tx.pendingAuthorizations.deleteAll(userID: user.id, subject: user.subject),
                totp: try tx.totp.remove(userID: user.id),
                passkeys: try tx.passkeys.removeAll(userID: user.id))
            try LoginThrottle.forgetAccount(userID: user.id, tx, now: now)
            guard try tx.users.delete(userID: user.id) else { throw ValidationError.notFound("no user with email \(email)") }
            return erased
        }
    }
}
