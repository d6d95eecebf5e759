import IssuerStorage
import SQLiteClient

/// `authorization_codes`, by the hash of the code.
final class SQLiteAuthorizationCodeStore: AuthorizationCodeStore {
    let database: SQLiteDatabase
    init(database: SQLiteDatabase) { self.database = database }

    func insert(codeHash: [UInt8], _ record: AuthorizationCodeGrantRecord, createdAt: Int64, expiresAt: Int64) throws {
        try database.execute("""
            INSERT INTO authorization_codes (code_hash, client_id, redirect_uri, code_challenge, scope, nonce, sid, user_id, auth_time,
                created_at, expires_at, amr, dpop_jkt) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, [.blob(codeHash), .text(record.clientID), .text(record.redirectURI), .text(record.codeChallenge),
                  .text(StoredList.encode(record.scope)), SQLiteValue(record.nonce), .text(record.sid), .integer(record.userID),
                  .integer(record.authTime), .integer(createdAt), .integer(expiresAt), .text(StoredList.encode(record.amr)),
                  SQLiteValue(record.dpopJKT)])
    }

    func redeem(codeHash: [UInt8], clientID: String, redirectURI: String, codeChallenge: String, now: Int64,
                issuing: CodeIssue) throws -> CodeRedemption {
        if let row = try database.queryOne("""
            UPDATE authorization_codes SET used_at = ?, issued_family_id = ?, issued_jti = ?
            WHERE code_hash = ? AND used_at IS NULL AND expires_at > ? AND client_id = ? AND redirect_uri = ? AND code_challenge = ?
            RETURNING client_id, redirect_uri, code_challenge, scope, nonce, sid, user_id, auth_time, amr, dpop_jkt
            """, [.integer(now), .text(issuing.familyID), .text(issuing.jti), .blob(codeHash), .integer(now), .text(clientID),
                  .text(redirectURI), .text(codeChallenge)]) {
            var record = AuthorizationCodeGrantRecord(
                clientID: row.string(0), redirectURI: row.string(1), codeChallenge: row.string(2), scope: StoredList.decode(row.string(3)),
                nonce: row.optionalString(4), sid: row.string(5), userID: row.int(6), authTime: row.int(7), amr: StoredList.decodeAMR(row.string(8)))
            record.dpopJKT = row.optionalString(9)
            return .redeemed(record)
        }
        let existing = try database.queryOne("""
            SELECT client_id, redirect_uri, code_challenge, expires_at, used_at, issued_family_id, issued_jti
            FROM authorization_codes WHERE code_hash = ?
            """, [.blob(codeHash)])
        return .refused(existing.map {
            UnredeemedCode(clientID: $0.string(0), redirectURI: $0.string(1), codeChallenge: $0.string(2), expiresAt: $0.int(3),
                           usedAt: $0.optionalInt(4), issuedFamilyID: $0.optionalString(5), issuedJTI: $0.optionalString(6))
        })
    }

    func deleteAll(userID: Int64) throws -> Int {
        try database.execute("DELETE FROM authorization_codes WHERE user_id = ?", [.integer(userID)])
    }
}
