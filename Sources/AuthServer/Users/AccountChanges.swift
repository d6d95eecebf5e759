import IssuerStorage
import SSOCore

/// What a changed account means for its sign-ins.
public struct AccountChangeResult: Equatable, Sendable {
    public let user: User
    /// The sids of the sessions that were live and are now ended.
    public let endedSessions: [String]
}

/// Password changes, disabling and ending a session, each in one write unit
/// with its consequences: every SSO session of the user ends, every refresh
/// token and device secret bound to one is revoked, and any half-finished
/// two-step sign-in (password checked, TOTP pending) is forgotten. Someone
/// who learnt the old password, or holds a stolen cookie or refresh token,
/// is out the moment the change commits.
public final class AccountChanges {
    let storage: any IssuerStorage
    let users: UserAccounts
    let clock: Clock

    public init(storage: any IssuerStorage, users: UserAccounts, clock: @escaping Clock = systemClock) {
        self.storage = storage
        self.users = users
        self.clock = clock
    }

    @discardableResult
    public func changePassword(email: String, password: String) throws -> AccountChangeResult {
        guard let user = try users.find(email: email) else { throw ValidationError("no user with email \(email)") }
        let hash = try users.newPasswordHash(password)
        return try storage.write { tx in
            try tx.users.setPasswordHash(hash, userID: user.id)
            return try endSignIns(of: user, tx)
        }
    }

    @discardableResult
    public func disable(email: String) throws -> AccountChangeResult {
        guard let user = try users.find(email: email) else { throw ValidationError("no user with email \(email)") }
        return try storage.write { tx in
            try tx.users.setDisabled(true, userID: user.id)
            return try endSignIns(of: user, tx)
        }
    }

    /// Ends one session and revokes what is bound to it, in one write unit.
    /// Throws for an unknown sid; an ended session is ended again
    /// harmlessly (its credentials were revoked with it).
    @discardableResult
    public func endSession(sid: String) throws -> SSOSessionListing {
        let now = clock()
        guard !sid.isEmpty, sid.utf8.count <= 64, let listing = try storage.read.sessions.listing(sid: sid, now: now) else {
            throw ValidationError("no session with sid \(sid.debugDescription)")
        }
        try storage.write { tx in try SessionBoundCredentials.endSession(sid, tx, now: now) }
        return listing
    }

    private func endSignIns(of user: User, _ tx: any IssuerWrites) throws -> AccountChangeResult {
        let now = clock()
        let ended = try tx.sessions.endAll(userID: user.id, at: now)
        // Every session of the user, ended or not: a refresh token outlives
        // the session row it names only if revoked here.
        for sid in try tx.sessions.sids(userID: user.id) { try SessionBoundCredentials.revokeAll(sid: sid, tx, now: now) }
        try tx.pendingAuthorizations.clearMarks(userID: user.id)
        return AccountChangeResult(user: user, endedSessions: ended)
    }
}
