import SSOCore

/// The first factor of a two-step sign-in, remembered on the pending
/// authorization itself (columns of `pending_authorizations`): the password
/// of `userID` was right at `verifiedAt`. The TOTP step trusts nothing the
/// form says about who is signing in; it reads this mark, which only the
/// browser holding the pending request's cookie can reach.
public final class PasswordVerifiedMarks {
    /// How long the TOTP step may follow the password step.
    public static let lifetime: Int64 = 300
    let database: SQLiteDatabase
    let clock: Clock

    public init(database: SQLiteDatabase, clock: @escaping Clock = systemClock) {
        self.database = database
        self.clock = clock
    }

    /// Marks the live pending request behind `cookieSecret`; false when it is gone.
    public func mark(cookieSecret: String, userID: Int64) throws -> Bool {
        let now = clock()
        return try database.execute("""
            UPDATE pending_authorizations SET password_verified_user_id = ?, password_verified_at = ?
            WHERE secret_hash = ? AND expires_at > ?
            """, [.integer(userID), .integer(now), .blob(SecretHash.of(cookieSecret)), .integer(now)]) == 1
    }

    /// The user whose password was verified for this pending request within
    /// `lifetime`; nil when there is no such mark or it is stale.
    public func verifiedUserID(cookieSecret: String) throws -> Int64? {
        let now = clock()
        return try database.queryOne("""
            SELECT password_verified_user_id FROM pending_authorizations
            WHERE secret_hash = ? AND expires_at > ? AND password_verified_user_id IS NOT NULL AND password_verified_at > ?
            """, [.blob(SecretHash.of(cookieSecret)), .integer(now), .integer(now - Self.lifetime)])?.optionalInt(0)
    }

    /// Consumes the pending request only if it still carries a fresh mark for
    /// `userID`: one atomic DELETE … RETURNING, like `consume(cookieSecret:)`.
    public func consume(cookieSecret: String, userID: Int64) throws -> PendingAuthorization? {
        let now = clock()
        return try database.queryOne("""
            DELETE FROM pending_authorizations
            WHERE secret_hash = ? AND expires_at > ? AND password_verified_user_id = ? AND password_verified_at > ?
            RETURNING \(PendingAuthorizationStore.columns)
            """, [.blob(SecretHash.of(cookieSecret)), .integer(now), .integer(userID), .integer(now - Self.lifetime)])
            .map(PendingAuthorizationStore.pending)
    }

    /// Forgets every mark for a user (password change, disabling): a first
    /// factor checked against the old password must not complete later.
    public func clear(userID: Int64) throws {
        try database.execute("""
            UPDATE pending_authorizations SET password_verified_user_id = NULL, password_verified_at = NULL
            WHERE password_verified_user_id = ?
            """, [.integer(userID)])
    }
}
