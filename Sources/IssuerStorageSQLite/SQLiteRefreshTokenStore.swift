import IssuerStorage
import SQLiteClient

/// `refresh_tokens`, by the hash of the token, grouped in families.
final class SQLiteRefreshTokenStore: RefreshTokenStore {
    let database: SQLiteDatabase
    init(database: SQLiteDatabase) { self.database = database }

    func details(tokenHash: [UInt8]) throws -> RefreshTokenDetails? {
        try database.queryOne("""
            SELECT family_id, client_id, user_id, sid, scope, auth_time, expires_at, dpop_jkt, created_at, used_at, revoked_at,
                   successor_hash, successor_sealed
            FROM refresh_tokens WHERE token_hash = ?
            """, [.blob(tokenHash)]).map { row in
            RefreshTokenDetails(record: Self.record(row), createdAt: row.int(8), usedAt: row.optionalInt(9), revokedAt: row.optionalInt(10),
                                successorHash: row[11].bytes, successorSealed: row[12].bytes)
        }
    }

    func insert(tokenHash: [UInt8], _ record: RefreshTokenRecord, createdAt: Int64) throws {
        try database.execute("""
            INSERT INTO refresh_tokens (token_hash, family_id, client_id, user_id, sid, scope, auth_time, created_at, expires_at, dpop_jkt)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, [.blob(tokenHash), .text(record.familyID), .text(record.clientID), .integer(record.userID), .text(record.sid),
                  .text(StoredList.encode(record.scope)), .integer(record.authTime), .integer(createdAt), .integer(record.expiresAt),
                  SQLiteValue(record.dpopJKT)])
    }

    func claim(_ presented: [UInt8], clientID: String, successor: RefreshTokenSuccessor, now: Int64) throws -> RefreshTokenRecord? {
        try database.queryOne("""
            UPDATE refresh_tokens SET used_at = ?, successor_hash = ?, successor_sealed = ?
            WHERE token_hash = ? AND client_id = ? AND used_at IS NULL AND revoked_at IS NULL AND expires_at > ?
              AND EXISTS (SELECT 1 FROM sso_sessions s JOIN users u ON u.id = s.user_id
                          WHERE s.sid = refresh_tokens.sid AND s.ended_at IS NULL AND s.expires_at > ? AND u.disabled = 0)
            RETURNING family_id, client_id, user_id, sid, scope, auth_time, expires_at, dpop_jkt
            """, [.integer(now), .blob(successor.tokenHash), successor.sealed.map { .blob($0) } ?? .null, .blob(presented), .text(clientID),
                  .integer(now), .integer(now)]).map(Self.record)
    }

    func revokeFamily(_ familyID: String, at now: Int64) throws {
        try database.execute("UPDATE refresh_tokens SET revoked_at = ? WHERE family_id = ? AND revoked_at IS NULL",
                             [.integer(now), .text(familyID)])
    }

    func revokeAll(sid: String, at now: Int64) throws {
        try database.execute("UPDATE refresh_tokens SET revoked_at = ? WHERE sid = ? AND revoked_at IS NULL", [.integer(now), .text(sid)])
    }

    func revokeAll(userID: Int64, at now: Int64) throws {
        try database.execute("UPDATE refresh_tokens SET revoked_at = ? WHERE user_id = ? AND revoked_at IS NULL",
                             [.integer(now), .integer(userID)])
    }

    /// No index on user_id in SQLite: a scan, as in `revokeAll(userID:)`;
    /// rare (an account's erasure) and one statement.
    func deleteAll(userID: Int64) throws -> Int {
        try database.execute("DELETE FROM refresh_tokens WHERE user_id = ?", [.integer(userID)])
    }

    static func record(_ row: SQLiteRow) -> RefreshTokenRecord {
        var record = RefreshTokenRecord(familyID: row.string(0), clientID: row.string(1), userID: row.int(2), sid: row.string(3),
                                        scope: StoredList.decode(row.string(4)), authTime: row.int(5), expiresAt: row.int(6))
        record.dpopJKT = row.optionalString(7)
        return record
    }
}

/// `revoked_access_tokens`, by jti.
final class SQLiteRevokedAccessTokenStore: RevokedAccessTokenStore {
    let database: SQLiteDatabase
    init(database: SQLiteDatabase) { self.database = database }

    func isRevoked(jti: String) throws -> Bool {
        try database.queryOne("SELECT 1 FROM revoked_access_tokens WHERE jti = ?", [.text(jti)]) != nil
    }

    func revoke(jti: String, expiresAt: Int64) throws {
        try database.execute("INSERT OR IGNORE INTO revoked_access_tokens (jti, expires_at) VALUES (?, ?)", [.text(jti), .integer(expiresAt)])
    }
}

/// `device_secrets`, by the hash of the secret.
final class SQLiteDeviceSecretStore: DeviceSecretStore {
    let database: SQLiteDatabase
    init(database: SQLiteDatabase) { self.database = database }

    static let columns = "secret_hash, sid, user_id, client_id, device_id, expires_at, scope"

    func live(secretHash: [UInt8], now: Int64) throws -> DeviceSecretRecord? {
        try database.queryOne("SELECT \(Self.columns) FROM device_secrets WHERE secret_hash = ? AND revoked_at IS NULL AND expires_at > ?",
                              [.blob(secretHash), .integer(now)]).map(Self.record)
    }

    func newestLive(sid: String, clientID: String, deviceID: String?, now: Int64) throws -> DeviceSecretRecord? {
        try database.queryOne("""
            SELECT \(Self.columns) FROM device_secrets
            WHERE sid = ?1 AND client_id = ?2 AND (?3 IS NULL OR device_id = ?3) AND revoked_at IS NULL AND expires_at > ?4
            ORDER BY created_at DESC, rowid DESC LIMIT 1
            """, [.text(sid), .text(clientID), SQLiteValue(deviceID), .integer(now)]).map(Self.record)
    }

    func insert(_ record: DeviceSecretRecord, codeHash: [UInt8]?, createdAt: Int64) throws {
        try database.execute("""
            INSERT INTO device_secrets (secret_hash, sid, user_id, client_id, device_id, scope, code_hash, created_at, expires_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, [.blob(record.secretHash), .text(record.sid), .integer(record.userID), .text(record.clientID), SQLiteValue(record.deviceID),
                  SQLiteValue(record.scope.map(StoredList.encode)), codeHash.map { .blob($0) } ?? .null, .integer(createdAt),
                  .integer(record.expiresAt)])
    }

    func revokeAll(sid: String, at now: Int64) throws {
        try database.execute("UPDATE device_secrets SET revoked_at = ? WHERE sid = ? AND revoked_at IS NULL", [.integer(now), .text(sid)])
    }

    func revokeAll(issuedByCodeHash codeHash: [UInt8], at now: Int64) throws {
        try database.execute("UPDATE device_secrets SET revoked_at = ? WHERE code_hash = ? AND revoked_at IS NULL",
                             [.integer(now), .blob(codeHash)])
    }

    func deleteAll(userID: Int64) throws -> Int {
        try database.execute("DELETE FROM device_secrets WHERE user_id = ?", [.integer(userID)])
    }

    static func record(_ row: SQLiteRow) -> DeviceSecretRecord {
        DeviceSecretRecord(secretHash: row.bytes(0), sid: row.string(1), userID: row.int(2), clientID: row.string(3),
                           deviceID: row.optionalString(4), expiresAt: row.int(5), scope: row.optionalString(6).map(StoredList.decode))
    }
}
