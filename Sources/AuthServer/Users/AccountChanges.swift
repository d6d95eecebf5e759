import IssuerStorage
import SSOCore

/// What a changed account means for its sign-ins.
public struct AccountChangeResult: Equatable, Sendable {
    public let user: User
    /// The sids of the sessions that were live and are now ended.
    public let endedSessions: [String]
    /// What a password reset for a compromised account also removed.
    public var removedPasskeys = 0
    public var removedTOTP = false
}

/// The other ways to sign in that a new password leaves in place unless
/// told: after a compromise, whoever held the account may have added a
/// passkey or enrolled their own authenticator app (both sign in, or pass
/// the second step, without the old password).
public struct CompromisedAccountCleanup: Equatable, Sendable {
    public var removePasskeys = false
    public var removeTOTP = false
    public init(removePasskeys: Bool = false, removeTOTP: Bool = false) {
        self.removePasskeys = removePasskeys
        self.removeTOTP = removeTOTP
    }
}

/// Password changes, disabling and ending a session, each in one write unit
/// with its consequences: every SSO session of the user ends, every refresh
/// token and device secret bound to one is revoked, and any half-finished
/// two-step sign-in (password checked, TOTP pending) is forgotten. Someone
/// who learnt the old password, or holds a stolen cookie or refresh token,
/// is out the moment the change commits.
///
/// The other administrative changes of an account (enabling, name and
/// roles, unlocking, removing TOTP, erasure: AccountErasure.swift) are here
/// too, each in one write unit that finds the account and changes it. Every
/// refusal (an unknown address, one with a control character, a value the
/// rules refuse) is a ValidationError thrown before anything is written.
public final class AccountChanges {
    let storage: any IssuerStorage
    let users: UserAccounts
    let clock: Clock

    public init(storage: any IssuerStorage, users: UserAccounts, clock: @escaping Clock = systemClock) {
        self.storage = storage
        self.users = users
        self.clock = clock
    }

    /// `cleanup`: passkeys and TOTP go in the same write unit, so no
    /// moment exists with the new password set and a planted passkey alive.
    @discardableResult
    public func changePassword(email: String, password: String, cleanup: CompromisedAccountCleanup = .init()) throws -> AccountChangeResult {
        let user = try users.existing(email: email)
        let hash = try users.newPasswordHash(password, email: user.email)
        return try storage.write { tx in
            try tx.users.setPasswordHash(hash, userID: user.id)
            var result = try endSignIns(of: user, tx, reason: .passwordChanged)
            if cleanup.removePasskeys { result.removedPasskeys = try tx.passkeys.removeAll(userID: user.id) }
            if cleanup.removeTOTP { result.removedTOTP = try tx.totp.remove(userID: user.id) }
            return result
        }
    }

    @discardableResult
    public func disable(email: String) throws -> AccountChangeResult {
        let user = try users.existing(email: email)
        return try storage.write { tx in
            try tx.users.setDisabled(true, userID: user.id)
            return try endSignIns(of: user, tx, reason: .userDisabled)
        }
    }

    /// Undoes `disable`: the user may sign in again. What disabling ended
    /// stays ended. `user` is the account as it was found; `wasDisabled` is
    /// false when there was nothing to undo (and nothing changed).
    @discardableResult
    public func enable(email: String) throws -> (user: User, wasDisabled: Bool) {
        try storage.write { tx in
            let user = try UserAccounts.existing(email: email, in: tx.users)
            if user.disabled { try tx.users.setDisabled(false, userID: user.id) }
            return (user, user.disabled)
        }
    }

    /// Changes the name, the roles (the whole list), or both, under the
    /// rules `UserAccounts.add` applies; at least one must be given. The
    /// next tokens carry them (ID token and userinfo: name; access token:
    /// roles); sessions stay.
    @discardableResult
    public func update(email: String, name: String?, roles: [String]?) throws -> User {
        guard name != nil || roles != nil else { throw ValidationError("nothing to change for \(email): give a name or roles") }
        if let name { try UserAccounts.validate(name: name) }
        if let roles { try UserAccounts.validate(roles: roles) }
        return try storage.write { tx in
            let user = try UserAccounts.existing(email: email, in: tx.users)
            guard let changed = try tx.users.update(name: name, roles: roles, userID: user.id) else {
                throw ValidationError.notFound("no user with email \(email)")
            }
            return changed
        }
    }

    /// Clears the account's failed sign-in lock (and its count towards
    /// one): the right password signs in at once. Per-address counters
    /// stay. `lockedUntil`: when the lock would have ended, nil when the
    /// account was not locked.
    @discardableResult
    public func unlock(email: String) throws -> (user: User, lockedUntil: Int64?) {
        try storage.write { tx in
            let user = try UserAccounts.existing(email: email, in: tx.users)
            return (user, try LoginThrottle.forgetAccount(userID: user.id, tx, now: clock()))
        }
    }

    /// Deletes the user's TOTP seed (a lost phone): the next sign-in asks
    /// for the password only. Sessions stay (end them with `endSession` or
    /// a password change if the phone may be in other hands). `removed` is
    /// false when the user had none (and nothing changed).
    @discardableResult
    public func removeTOTP(email: String) throws -> (user: User, removed: Bool) {
        try storage.write { tx in
            let user = try UserAccounts.existing(email: email, in: tx.users)
            return (user, try tx.totp.remove(userID: user.id))
        }
    }

    /// Ends one session and revokes what is bound to it, in one write unit.
    /// Throws for an unknown sid; an ended session is ended again
    /// harmlessly (its credentials were revoked with it).
    @discardableResult
    public func endSession(sid: String, expecting: (SSOSessionListing) throws -> Void = { _ in }) throws -> SSOSessionListing {
        let now = clock()
        guard !sid.isEmpty, sid.utf8.count <= 64 else { throw ValidationError.notFound("no session with sid \(sid.debugDescription)") }
        return try storage.write { tx in
            try tx.serializeAdministrativeChanges()
            guard let listing = try tx.sessions.listing(sid: sid, now: now) else {
                throw ValidationError.notFound("no session with sid \(sid.debugDescription)")
            }
            try expecting(listing)
            try SessionBoundCredentials.endSession(sid, tx, now: now)
            return listing
        }
    }

    /// The user's own change on /account: the new password is set, and
    /// every other sign-in of the account ends with its tokens (one of them
    /// may be whoever learnt the old password), while `keepingSID`, the
    /// browser that made the change, stays signed in. The current password
    /// was checked by the caller.
    @discardableResult
    public func changeOwnPassword(of user: User, to password: String, keepingSID: String) throws -> [String] {
        let hash = try users.newPasswordHash(password, email: user.email)
        return try storage.write { tx in
            try tx.users.setPasswordHash(hash, userID: user.id)
            let now = clock()
            var ended: [String] = []
            for sid in try tx.sessions.sids(userID: user.id) where !sid.bytesEqual(keepingSID) {
                try SessionBoundCredentials.endSession(sid, tx, now: now, reason: .passwordChanged)
                ended.append(sid)
            }
            try tx.pendingAuthorizations.clearMarks(userID: user.id)
            return ended
        }
    }

    func endSignIns(of user: User, _ tx: any IssuerWrites, reason: SessionEndReason) throws -> AccountChangeResult {
        let ended = try SessionBoundCredentials.endEverySession(userID: user.id, tx, now: clock(), reason: reason)
        try tx.pendingAuthorizations.clearMarks(userID: user.id)
        return AccountChangeResult(user: user, endedSessions: ended)
    }
}
