import IssuerStorage
import SQLiteClient

/// `users`: the email column is `COLLATE NOCASE`, SQLite's ASCII-only
/// folding, the same as EmailKey.
final class SQLiteUserStore: UserStore {
    let database: SQLiteDatabase
    init(database: SQLiteDatabase) { self.database = database }

    static let columns = "id, subject, email, name, password_hash, roles, disabled, email_verified"

    func find(email: String) throws -> User? {
        try database.queryOne("SELECT \(Self.columns) FROM users WHERE email = ?", [.text(email)]).map { Self.user($0) }
    }

    func find(id: Int64) throws -> User? {
        try database.queryOne("SELECT \(Self.columns) FROM users WHERE id = ?", [.integer(id)]).map { Self.user($0) }
    }

    func find(subject: String) throws -> User? {
        try database.queryOne("SELECT \(Self.columns) FROM users WHERE subject = ?", [.text(subject)]).map { Self.user($0) }
    }

    func list() throws -> [User] {
        try database.query("SELECT \(Self.columns) FROM users ORDER BY email").map { Self.user($0) }
    }

    func page(afterID: Int64, limit: Int) throws -> [User] {
        try database.query("SELECT \(Self.columns) FROM users WHERE id > ? ORDER BY id LIMIT ?", [.integer(afterID), .integer(Int64(limit))])
            .map { Self.user($0) }
    }

    func insert(_ user: NewUser) throws -> User {
        let row = try database.queryOne("""
            INSERT INTO users (subject, email, name, password_hash, roles, created_at, email_verified) VALUES (?, ?, ?, ?, ?, ?, ?)
            RETURNING \(Self.columns)
            """, [.text(user.subject), .text(user.email), .text(user.name), .text(user.passwordHash), .text(StoredList.encode(user.roles)),
                  .integer(user.createdAt), SQLiteValue(user.emailVerified)])
        return Self.user(row!)
    }

    func setPasswordHash(_ hash: String, userID: Int64) throws {
        try database.execute("UPDATE users SET password_hash = ? WHERE id = ?", [.text(hash), .integer(userID)])
    }

    func setDisabled(_ disabled: Bool, userID: Int64) throws {
        try database.execute("UPDATE users SET disabled = ? WHERE id = ?", [SQLiteValue(disabled), .integer(userID)])
    }

    func markEmailVerified(userID: Int64) throws -> Bool {
        try database.execute("UPDATE users SET email_verified = 1 WHERE id = ? AND email_verified = 0", [.integer(userID)]) == 1
    }

    func update(name: String?, roles: [String]?, userID: Int64) throws -> User? {
        try database.queryOne("""
            UPDATE users SET name = coalesce(?, name), roles = coalesce(?, roles) WHERE id = ? RETURNING \(Self.columns)
            """, [SQLiteValue(name), SQLiteValue(roles.map(StoredList.encode)), .integer(userID)]).map { Self.user($0) }
    }

    func changeEmail(_ email: String, userID: Int64) throws -> User? {
        try database.queryOne("UPDATE users SET email = ?, email_verified = 1 WHERE id = ? RETURNING \(Self.columns)",
                              [.text(email), .integer(userID)]).map { Self.user($0) }
    }

    /// `totp_credentials` goes by ON DELETE CASCADE (foreign keys are on:
    /// SQLiteDatabase); `sso_sessions` has no cascade and refuses.
    func delete(userID: Int64) throws -> Bool {
        try database.execute("DELETE FROM users WHERE id = ?", [.integer(userID)]) == 1
    }

    /// `columns`, from column `first` of `row` on.
    static func user(_ row: SQLiteRow, from first: Int = 0) -> User {
        User(id: row.int(first), subject: row.string(first + 1), email: row.string(first + 2), name: row.string(first + 3),
             passwordHash: row.string(first + 4), roles: StoredList.decode(row.string(first + 5)), disabled: row.int(first + 6) != 0,
             emailVerified: row.int(first + 7) != 0)
    }
}

/// `totp_credentials`: one sealed seed per user; `totp_recovery_codes`:
/// the hashes of its unused recovery codes.
final class SQLiteTOTPStore: TOTPStore {
    let database: SQLiteDatabase
    init(database: SQLiteDatabase) { self.database = database }

    func credential(userID: Int64) throws -> StoredTOTP? {
        try database.queryOne("SELECT sealed_secret, last_used_step FROM totp_credentials WHERE user_id = ?", [.integer(userID)])
            .map { StoredTOTP(sealedSecret: $0.bytes(0), lastUsedStep: $0.int(1)) }
    }

    func enrol(userID: Int64, sealedSecret: [UInt8], at now: Int64) throws {
        try database.execute("""
            INSERT INTO totp_credentials (user_id, sealed_secret, last_used_step, created_at) VALUES (?, ?, -1, ?)
            ON CONFLICT (user_id) DO UPDATE SET sealed_secret = excluded.sealed_secret, last_used_step = -1,
                created_at = excluded.created_at
            """, [.integer(userID), .blob(sealedSecret), .integer(now)])
    }

    func accept(step: Int64, userID: Int64) throws -> Bool {
        try database.execute("UPDATE totp_credentials SET last_used_step = ? WHERE user_id = ? AND last_used_step < ?",
                             [.integer(step), .integer(userID), .integer(step)]) == 1
    }

    func remove(userID: Int64) throws -> Bool {
        try database.execute("DELETE FROM totp_recovery_codes WHERE user_id = ?", [.integer(userID)])
        return try database.execute("DELETE FROM totp_credentials WHERE user_id = ?", [.integer(userID)]) == 1
    }

    func recoveryCodesLeft(userID: Int64) throws -> Int {
        Int(try database.queryOne("SELECT count(*) FROM totp_recovery_codes WHERE user_id = ?", [.integer(userID)])?.int(0) ?? 0)
    }

    func replaceRecoveryCodes(userID: Int64, hashes: [[UInt8]], at now: Int64) throws {
        try database.execute("DELETE FROM totp_recovery_codes WHERE user_id = ?", [.integer(userID)])
        for hash in hashes {
            try database.execute("INSERT INTO totp_recovery_codes (user_id, code_hash, created_at) VALUES (?, ?, ?)",
                                 [.integer(userID), .blob(hash), .integer(now)])
        }
    }

    func useRecoveryCode(userID: Int64, hash: [UInt8]) throws -> Bool {
        try database.execute("DELETE FROM totp_recovery_codes WHERE user_id = ? AND code_hash = ?", [.integer(userID), .blob(hash)]) == 1
    }
}
