import SSOCore

/// A user's TOTP seed, opened, and the last time step a code was accepted for.
public struct TOTPCredential: Equatable, Sendable {
    public let secret: [UInt8]
    public let lastUsedStep: Int64
}

/// TOTP enrolments (`totp_credentials`): one sealed seed per user.
public final class TOTPStore {
    let database: SQLiteDatabase
    let sealer: TOTPSecretSealer
    let clock: Clock

    public init(database: SQLiteDatabase, sealer: TOTPSecretSealer, clock: @escaping Clock = systemClock) {
        self.database = database
        self.sealer = sealer
        self.clock = clock
    }

    /// Enrols `userID` with a fresh random seed, replacing any earlier one
    /// (whose codes stop working at once); returns the seed to show once.
    public func enrol(userID: Int64) throws -> [UInt8] {
        let secret = SecureRandom.bytes(TOTP.secretByteCount)
        let sealed = try sealer.seal(secret, userID: userID)
        try database.execute("""
            INSERT INTO totp_credentials (user_id, sealed_secret, last_used_step, created_at) VALUES (?, ?, -1, ?)
            ON CONFLICT (user_id) DO UPDATE SET sealed_secret = excluded.sealed_secret, last_used_step = -1,
                created_at = excluded.created_at
            """, [.integer(userID), .blob(sealed), .integer(clock())])
        return secret
    }

    public func isEnrolled(userID: Int64) throws -> Bool {
        try database.queryOne("SELECT 1 FROM totp_credentials WHERE user_id = ?", [.integer(userID)]) != nil
    }

    public func credential(userID: Int64) throws -> TOTPCredential? {
        guard let row = try database.queryOne("SELECT sealed_secret, last_used_step FROM totp_credentials WHERE user_id = ?",
                                              [.integer(userID)]) else { return nil }
        return TOTPCredential(secret: try sealer.open(row.bytes(0), userID: userID), lastUsedStep: row.int(1))
    }

    /// Records `step` as used, atomically: false when this step or a later
    /// one was already accepted (a replay, or a concurrent use of one code).
    public func accept(step: Int64, userID: Int64) throws -> Bool {
        try database.execute("UPDATE totp_credentials SET last_used_step = ? WHERE user_id = ? AND last_used_step < ?",
                             [.integer(step), .integer(userID), .integer(step)]) == 1
    }
}
