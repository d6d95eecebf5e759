import SSOCore

/// What a changed account means for its sign-ins.
public struct AccountChangeResult: Equatable, Sendable {
    public let user: User
    /// The sids of the sessions that were live and are now ended.
    public let endedSessions: [String]
}

/// Password changes and disabling, each in one transaction with its
/// consequences: every SSO session of the user ends, every refresh token is
/// revoked, and any half-finished two-step sign-in (password checked, TOTP
/// pending) is forgotten. Someone who learnt the old password, or holds a
/// stolen cookie or refresh token, is out the moment the change commits.
public final class AccountChanges {
    let database: SQLiteDatabase
    let users: UserStore
    let sessions: SSOSessionStore
    let boundCredentials: SessionBoundCredentials
    let marks: PasswordVerifiedMarks

    public init(database: SQLiteDatabase, users: UserStore, clock: @escaping Clock = systemClock) {
        self.database = database
        self.users = users
        sessions = SSOSessionStore(database: database, clock: clock)
        boundCredentials = SessionBoundCredentials(database: database, clock: clock)
        marks = PasswordVerifiedMarks(database: database, clock: clock)
    }

    @discardableResult
    public func changePassword(email: String, password: String) throws -> AccountChangeResult {
        guard let user = try users.find(email: email) else { throw ValidationError("no user with email \(email)") }
        let hash = try users.newPasswordHash(password)
        return try database.transaction {
            try users.storePasswordHash(hash, userID: user.id)
            return try endSignIns(of: user)
        }
    }

    @discardableResult
    public func disable(email: String) throws -> AccountChangeResult {
        guard let user = try users.find(email: email) else { throw ValidationError("no user with email \(email)") }
        return try database.transaction {
            try users.storeDisabled(userID: user.id)
            return try endSignIns(of: user)
        }
    }

    /// Ends one session and revokes the refresh tokens bound to it, in one
    /// transaction. Throws for an unknown sid; an ended session is ended
    /// again harmlessly (its tokens were revoked with it).
    @discardableResult
    public func endSession(sid: String) throws -> SSOSessionListing {
        guard !sid.isEmpty, sid.utf8.count <= 64, let listing = try sessions.listing(sid: sid) else {
            throw ValidationError("no session with sid \(sid.debugDescription)")
        }
        try database.transaction {
            try sessions.end(sid: sid)
            try boundCredentials.revokeAll(sid: sid)
        }
        return listing
    }

    private func endSignIns(of user: User) throws -> AccountChangeResult {
        let ended = try sessions.endAll(userID: user.id)
        // Every session of the user, ended or not: a refresh token outlives
        // the session row it names only if revoked here.
        for sid in try sessions.allSIDs(userID: user.id) { try boundCredentials.revokeAll(sid: sid) }
        try marks.clear(userID: user.id)
        return AccountChangeResult(user: user, endedSessions: ended)
    }
}
