import IssuerStorage
import PostgreSQLClient

/// `passkeys`, by credential id (BYTEA, compared byte for byte). The row
/// lock of `recordUse`'s UPDATE decides between concurrent callers on any
/// node: the loser waits for the winner's commit, re-reads the row, finds
/// the count no longer below its own, and updates nothing.
final class PostgreSQLPasskeyStore: PasskeyStore {
    let connection: PostgreSQLConnection
    init(connection: PostgreSQLConnection) { self.connection = connection }

    static let columns = """
        credential_id, user_id, public_key_cose, algorithm, sign_count, name, aaguid, backup_eligible, backup_state, transports,
        created_at, last_used_at
        """

    func find(credentialID: [UInt8]) throws -> PasskeyRecord? {
        try connection.lookupOne("SELECT \(Self.columns) FROM passkeys WHERE credential_id = $1", [.bytes(credentialID)]).map(Self.passkey)
    }

    /// Oldest first; one creation second is ordered by credential id (as
    /// bytes), the same on every backend.
    func list(userID: Int64) throws -> [PasskeyRecord] {
        try connection.lookup("SELECT \(Self.columns) FROM passkeys WHERE user_id = $1 ORDER BY created_at, credential_id",
                              [.integer(userID)]).map(Self.passkey)
    }

    /// A name or transport holding NUL cannot be stored (PostgreSQL text):
    /// the insert throws and the write unit rolls back.
    func add(_ passkey: PasskeyRecord) throws -> Bool {
        try connection.execute("""
            INSERT INTO passkeys (\(Self.columns)) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
            ON CONFLICT (credential_id) DO NOTHING
            """, [.bytes(passkey.credentialID), .integer(passkey.userID), .bytes(passkey.publicKeyCOSE), .integer(Int64(passkey.algorithm)),
                  .integer(passkey.signCount), .text(passkey.name), .bytes(passkey.aaguid), PostgreSQLValue(passkey.backupEligible),
                  PostgreSQLValue(passkey.backupState), .text(StoredList.encode(passkey.transports)), .integer(passkey.createdAt),
                  PostgreSQLValue(passkey.lastUsedAt)]) == 1
    }

    func recordUse(credentialID: [UInt8], signCount: Int64, backupState: Bool, now: Int64) throws -> Bool {
        try connection.execute("""
            UPDATE passkeys SET sign_count = $1, backup_state = $2, last_used_at = $3
            WHERE credential_id = $4 AND (sign_count < $1 OR (sign_count = 0 AND $1 = 0))
            """, [.integer(signCount), PostgreSQLValue(backupState), .integer(now), .bytes(credentialID)]) == 1
    }

    /// A new name holding NUL throws (PostgreSQL text), changing nothing.
    func rename(credentialID: [UInt8], userID: Int64, name: String) throws -> Bool {
        try connection.execute("UPDATE passkeys SET name = $1 WHERE credential_id = $2 AND user_id = $3",
                               [.text(name), .bytes(credentialID), .integer(userID)]) == 1
    }

    func remove(credentialID: [UInt8], userID: Int64) throws -> Bool {
        try connection.execute("DELETE FROM passkeys WHERE credential_id = $1 AND user_id = $2", [.bytes(credentialID), .integer(userID)]) == 1
    }

    func removeAll(userID: Int64) throws -> Int {
        try connection.execute("DELETE FROM passkeys WHERE user_id = $1", [.integer(userID)])
    }

    static func passkey(_ row: PostgreSQLRow) -> PasskeyRecord {
        PasskeyRecord(credentialID: row.bytes(0), userID: row.int(1), publicKeyCOSE: row.bytes(2), algorithm: Int(row.int(3)),
                      signCount: row.int(4), name: row.string(5), aaguid: row.bytes(6), backupEligible: row.int(7) != 0,
                      backupState: row.int(8) != 0, transports: StoredList.decode(row.string(9)), createdAt: row.int(10),
                      lastUsedAt: row.optionalInt(11))
    }
}

/// `webauthn_challenges`, by the challenge's SHA-256.
final class PostgreSQLWebAuthnChallengeStore: WebAuthnChallengeStore {
    let connection: PostgreSQLConnection
    init(connection: PostgreSQLConnection) { self.connection = connection }

    func issue(challengeHash: [UInt8], _ record: WebAuthnChallengeRecord) throws {
        try connection.execute("""
            INSERT INTO webauthn_challenges (challenge_hash, purpose, user_id, binding, expires_at) VALUES ($1, $2, $3, $4, $5)
            """, [.bytes(challengeHash), .text(record.purpose), PostgreSQLValue(record.userID), PostgreSQLValue(record.binding),
                  .integer(record.expiresAt)])
    }

    /// The row lock of the UPDATE decides: a concurrent claim waits for the
    /// winner's commit, re-reads the row, finds `used_at` set, and updates
    /// nothing. A purpose holding NUL names no challenge (`lookupOne`).
    func claim(challengeHash: [UInt8], purpose: String, now: Int64) throws -> WebAuthnChallengeRecord? {
        try connection.lookupOne("""
            UPDATE webauthn_challenges SET used_at = $1
            WHERE challenge_hash = $2 AND used_at IS NULL AND expires_at > $1 AND purpose = $3
            RETURNING purpose, user_id, binding, expires_at
            """, [.integer(now), .bytes(challengeHash), .text(purpose)]).map {
            WebAuthnChallengeRecord(purpose: $0.string(0), userID: $0.optionalInt(1), binding: $0.optionalBytes(2), expiresAt: $0.int(3))
        }
    }
}
