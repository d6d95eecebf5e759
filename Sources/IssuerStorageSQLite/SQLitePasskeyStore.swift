import IssuerStorage
import SQLiteClient

/// `passkeys`, by credential id (bytes, bound as a blob of its exact
/// length). Write units hold SQLite's write lock (BEGIN IMMEDIATE), so of
/// concurrent `recordUse` calls with one count the second runs its UPDATE
/// after the first committed and matches nothing.
final class SQLitePasskeyStore: PasskeyStore {
    let database: SQLiteDatabase
    init(database: SQLiteDatabase) { self.database = database }

    static let columns = """
        credential_id, user_id, public_key_cose, algorithm, sign_count, name, aaguid, backup_eligible, backup_state, transports,
        created_at, last_used_at
        """

    func find(credentialID: [UInt8]) throws -> PasskeyRecord? {
        try database.queryOne("SELECT \(Self.columns) FROM passkeys WHERE credential_id = ?", [.blob(credentialID)]).map(Self.passkey)
    }

    /// Oldest first; one creation second is ordered by credential id (as
    /// bytes), the same on every backend.
    func list(userID: Int64) throws -> [PasskeyRecord] {
        try database.query("SELECT \(Self.columns) FROM passkeys WHERE user_id = ? ORDER BY created_at, credential_id",
                           [.integer(userID)]).map(Self.passkey)
    }

    /// SQLite binds an empty blob as NULL: `coalesce(?, x'')` stores what
    /// was given, as PostgreSQL does (an empty credential id is refused by
    /// the table's CHECK on both).
    func add(_ passkey: PasskeyRecord) throws -> Bool {
        try database.execute("""
            INSERT INTO passkeys (\(Self.columns))
            VALUES (?, ?, coalesce(?, x''), ?, ?, ?, coalesce(?, x''), ?, ?, ?, ?, ?)
            ON CONFLICT (credential_id) DO NOTHING
            """, [.blob(passkey.credentialID), .integer(passkey.userID), .blob(passkey.publicKeyCOSE), .integer(Int64(passkey.algorithm)),
                  .integer(passkey.signCount), .text(passkey.name), .blob(passkey.aaguid), SQLiteValue(passkey.backupEligible),
                  SQLiteValue(passkey.backupState), .text(StoredList.encode(passkey.transports)), .integer(passkey.createdAt),
                  passkey.lastUsedAt.map { .integer($0) } ?? .null]) == 1
    }

    func recordUse(credentialID: [UInt8], signCount: Int64, backupState: Bool, now: Int64) throws -> Bool {
        try database.execute("""
            UPDATE passkeys SET sign_count = ?1, backup_state = ?2, last_used_at = ?3
            WHERE credential_id = ?4 AND (sign_count < ?1 OR (sign_count = 0 AND ?1 = 0))
            """, [.integer(signCount), SQLiteValue(backupState), .integer(now), .blob(credentialID)]) == 1
    }

    func rename(credentialID: [UInt8], userID: Int64, name: String) throws -> Bool {
        try database.execute("UPDATE passkeys SET name = ? WHERE credential_id = ? AND user_id = ?",
                             [.text(name), .blob(credentialID), .integer(userID)]) == 1
    }

    func remove(credentialID: [UInt8], userID: Int64) throws -> Bool {
        try database.execute("DELETE FROM passkeys WHERE credential_id = ? AND user_id = ?", [.blob(credentialID), .integer(userID)]) == 1
    }

    func removeAll(userID: Int64) throws -> Int {
        try database.execute("DELETE FROM passkeys WHERE user_id = ?", [.integer(userID)])
    }

    static func passkey(_ row: SQLiteRow) -> PasskeyRecord {
        PasskeyRecord(credentialID: row.bytes(0), userID: row.int(1), publicKeyCOSE: row.bytes(2), algorithm: Int(row.int(3)),
                      signCount: row.int(4), name: row.string(5), aaguid: row.bytes(6), backupEligible: row.int(7) != 0,
                      backupState: row.int(8) != 0, transports: StoredList.decode(row.string(9)), createdAt: row.int(10),
                      lastUsedAt: row.optionalInt(11))
    }
}

/// `webauthn_challenges`, by the challenge's SHA-256.
final class SQLiteWebAuthnChallengeStore: WebAuthnChallengeStore {
    let database: SQLiteDatabase
    init(database: SQLiteDatabase) { self.database = database }

    /// An empty binding is stored as an empty blob, not as NULL (SQLite
    /// binds an empty blob as NULL): nil and [] stay apart.
    func issue(challengeHash: [UInt8], _ record: WebAuthnChallengeRecord) throws {
        try database.execute("""
            INSERT INTO webauthn_challenges (challenge_hash, purpose, user_id, binding, expires_at)
            VALUES (?, ?, ?, CASE WHEN ? = 1 THEN coalesce(?, x'') END, ?)
            """, [.blob(challengeHash), .text(record.purpose), record.userID.map { .integer($0) } ?? .null,
                  SQLiteValue(record.binding != nil), record.binding.map { .blob($0) } ?? .null, .integer(record.expiresAt)])
    }

    /// Write units hold SQLite's write lock, so a second claimer runs its
    /// UPDATE after the first committed and matches nothing.
    func claim(challengeHash: [UInt8], purpose: String, now: Int64) throws -> WebAuthnChallengeRecord? {
        try database.queryOne("""
            UPDATE webauthn_challenges SET used_at = ?1
            WHERE challenge_hash = ?2 AND used_at IS NULL AND expires_at > ?1 AND purpose = ?3
            RETURNING purpose, user_id, binding, expires_at
            """, [.integer(now), .blob(challengeHash), .text(purpose)]).map {
            WebAuthnChallengeRecord(purpose: $0.string(0), userID: $0.optionalInt(1), binding: $0[2].bytes, expiresAt: $0.int(3))
        }
    }
}
