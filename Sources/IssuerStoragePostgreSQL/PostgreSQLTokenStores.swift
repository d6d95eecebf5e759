import IssuerStorage
import PostgreSQLClient

/// `authorization_codes`, by the hash of the code.
final class PostgreSQLAuthorizationCodeStore: AuthorizationCodeStore {
    let connection: PostgreSQLConnection
    init(connection: PostgreSQLConnection) { self.connection = connection }

    func insert(codeHash: [UInt8], _ record: AuthorizationCodeGrantRecord, createdAt: Int64, expiresAt: Int64) throws {
        try connection.execute("""
            INSERT INTO authorization_codes (code_hash, client_id, redirect_uri, code_challenge, scope, nonce, sid, user_id, auth_time,
                created_at, expires_at, amr, dpop_jkt) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
            """, [.bytes(codeHash), .text(record.clientID), .text(record.redirectURI), .text(record.codeChallenge),
                  .text(StoredList.encode(record.scope)), PostgreSQLValue(record.nonce), .text(record.sid), .integer(record.userID),
                  .integer(record.authTime), .integer(createdAt), .integer(expiresAt), .text(StoredList.encode(record.amr)),
                  PostgreSQLValue(record.dpopJKT)])
    }

    /// The row lock of the UPDATE decides: a concurrent redemption waits for
    /// the winner's commit, re-reads the row, finds `used_at` set, and
    /// updates nothing.
    func redeem(codeHash: [UInt8], clientID: String, redirectURI: String, codeChallenge: String, now: Int64,
                issuing: CodeIssue) throws -> CodeRedemption {
        if let row = try connection.lookupOne("""
            UPDATE authorization_codes SET used_at = $1, issued_family_id = $6, issued_jti = $7
            WHERE code_hash = $2 AND used_at IS NULL AND expires_at > $1 AND client_id = $3 AND redirect_uri = $4 AND code_challenge = $5
            RETURNING client_id, redirect_uri, code_challenge, scope, nonce, sid, user_id, auth_time, amr, dpop_jkt
            """, [.integer(now), .bytes(codeHash), .text(clientID), .text(redirectURI), .text(codeChallenge), .text(issuing.familyID),
                  .text(issuing.jti)]) {
            var record = AuthorizationCodeGrantRecord(
                clientID: row.string(0), redirectURI: row.string(1), codeChallenge: row.string(2), scope: StoredList.decode(row.string(3)),
                nonce: row.optionalString(4), sid: row.string(5), userID: row.int(6), authTime: row.int(7),
                amr: StoredList.decodeAMR(row.string(8)))
            record.dpopJKT = row.optionalString(9)
            return .redeemed(record)
        }
        let existing = try connection.lookupOne("""
            SELECT client_id, redirect_uri, code_challenge, expires_at, used_at, issued_family_id, issued_jti
            FROM authorization_codes WHERE code_hash = $1
            """, [.bytes(codeHash)])
        return .refused(existing.map {
            UnredeemedCode(clientID: $0.string(0), redirectURI: $0.string(1), codeChallenge: $0.string(2), expiresAt: $0.int(3),
                           usedAt: $0.optionalInt(4), issuedFamilyID: $0.optionalString(5), issuedJTI: $0.optionalString(6))
        })
    }

    func deleteAll(userID: Int64) throws -> Int {
        try connection.execute("DELETE FROM authorization_codes WHERE user_id = $1", [.integer(userID)])
    }
}

/// `refresh_tokens`, by the hash of the token, grouped in families.
final class PostgreSQLRefreshTokenStore: RefreshTokenStore {
    let connection: PostgreSQLConnection
    init(connection: PostgreSQLConnection) { self.connection = connection }

    static let recordColumns = "family_id, client_id, user_id, sid, scope, auth_time, expires_at, dpop_jkt"

    func details(tokenHash: [UInt8]) throws -> RefreshTokenDetails? {
        try connection.lookupOne("""
            SELECT \(Self.recordColumns), created_at, used_at, revoked_at, successor_hash, successor_sealed
            FROM refresh_tokens WHERE token_hash = $1
            """, [.bytes(tokenHash)]).map { row in
            RefreshTokenDetails(record: Self.record(row), createdAt: row.int(8), usedAt: row.optionalInt(9), revokedAt: row.optionalInt(10),
                                successorHash: row.optionalBytes(11), successorSealed: row.optionalBytes(12))
        }
    }

    func insert(tokenHash: [UInt8], _ record: RefreshTokenRecord, createdAt: Int64) throws {
        try connection.execute("""
            INSERT INTO refresh_tokens (token_hash, family_id, client_id, user_id, sid, scope, auth_time, created_at, expires_at, dpop_jkt)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
            """, [.bytes(tokenHash), .text(record.familyID), .text(record.clientID), .integer(record.userID), .text(record.sid),
                  .text(StoredList.encode(record.scope)), .integer(record.authTime), .integer(createdAt), .integer(record.expiresAt),
                  PostgreSQLValue(record.dpopJKT)])
    }

    /// As `redeem` for codes: the row lock picks one winner on any node.
    func claim(_ presented: [UInt8], clientID: String, successor: RefreshTokenSuccessor, now: Int64) throws -> RefreshTokenRecord? {
        try connection.lookupOne("""
            UPDATE refresh_tokens SET used_at = $1, successor_hash = $2, successor_sealed = $3
            WHERE token_hash = $4 AND client_id = $5 AND used_at IS NULL AND revoked_at IS NULL AND expires_at > $1
              AND EXISTS (SELECT 1 FROM sso_sessions s JOIN users u ON u.id = s.user_id
                          WHERE s.sid = refresh_tokens.sid AND s.ended_at IS NULL AND s.expires_at > $1 AND u.disabled = 0)
            RETURNING \(Self.recordColumns)
            """, [.integer(now), .bytes(successor.tokenHash), PostgreSQLValue(successor.sealed), .bytes(presented), .text(clientID)])
            .map(Self.record)
    }

    func revokeFamily(_ familyID: String, at now: Int64) throws {
        try revokeUntilNoneLive(where: "family_id", .text(familyID), at: now)
    }

    func revokeAll(sid: String, at now: Int64) throws {
        try revokeUntilNoneLive(where: "sid", .text(sid), at: now)
    }

    func revokeAll(userID: Int64, at now: Int64) throws {
        try revokeUntilNoneLive(where: "user_id", .integer(userID), at: now)
    }

    /// At most this many passes; each further one needs a rotation of the
    /// same tokens to commit in between, which takes a client a round trip.
    static let revocationPasses = 16

    /// Under READ COMMITTED an UPDATE sees the rows committed when it began;
    /// for a row a rotation holds (its claim) it waits for the commit and
    /// re-reads that row alone, so the successor the rotation inserted is
    /// not among the rows it revokes, and would live on. So the UPDATE runs
    /// again, each time over what is committed by then, until it finds no
    /// live token left: then no rotation of them was in flight either (its
    /// claimed token would have been live), and none can start, as every
    /// token is revoked. SQLite needs none of this: its writes take turns.
    func revokeUntilNoneLive(where column: String, _ value: PostgreSQLValue, at now: Int64) throws {
        for _ in 0..<Self.revocationPasses {
            let revoked = try connection.execute("UPDATE refresh_tokens SET revoked_at = $1 WHERE \(column) = $2 AND revoked_at IS NULL",
                                                 [.integer(now), value])
            if revoked == 0 { return }
        }
        // 40001: the client is told to retry (503); the unit rolls back.
        throw PostgreSQLError(sqlState: "40001", message: "refresh tokens kept rotating while being revoked")
    }

    /// Indexed on user_id.
    func deleteAll(userID: Int64) throws -> Int {
        try connection.execute("DELETE FROM refresh_tokens WHERE user_id = $1", [.integer(userID)])
    }

    static func record(_ row: PostgreSQLRow) -> RefreshTokenRecord {
        var record = RefreshTokenRecord(familyID: row.string(0), clientID: row.string(1), userID: row.int(2), sid: row.string(3),
                                        scope: StoredList.decode(row.string(4)), authTime: row.int(5), expiresAt: row.int(6))
        record.dpopJKT = row.optionalString(7)
        return record
    }
}

/// `revoked_access_tokens`, by jti.
final class PostgreSQLRevokedAccessTokenStore: RevokedAccessTokenStore {
    let connection: PostgreSQLConnection
    init(connection: PostgreSQLConnection) { self.connection = connection }

    func isRevoked(jti: String) throws -> Bool {
        try connection.lookupOne("SELECT 1 FROM revoked_access_tokens WHERE jti = $1", [.text(jti)]) != nil
    }

    func revoke(jti: String, expiresAt: Int64) throws {
        try connection.execute("INSERT INTO revoked_access_tokens (jti, expires_at) VALUES ($1, $2) ON CONFLICT (jti) DO NOTHING",
                               [.text(jti), .integer(expiresAt)])
    }
}

/// `device_secrets`, by the hash of the secret.
final class PostgreSQLDeviceSecretStore: DeviceSecretStore {
    let connection: PostgreSQLConnection
    init(connection: PostgreSQLConnection) { self.connection = connection }

    static let columns = "secret_hash, sid, user_id, client_id, device_id, expires_at, scope"

    func live(secretHash: [UInt8], now: Int64) throws -> DeviceSecretRecord? {
        try connection.lookupOne("""
            SELECT \(Self.columns) FROM device_secrets WHERE secret_hash = $1 AND revoked_at IS NULL AND expires_at > $2
            """, [.bytes(secretHash), .integer(now)]).map(Self.record)
    }

    func newestLive(sid: String, clientID: String, deviceID: String?, now: Int64) throws -> DeviceSecretRecord? {
        try connection.lookupOne("""
            SELECT \(Self.columns) FROM device_secrets
            WHERE sid = $1 AND client_id = $2 AND ($3::text IS NULL OR device_id = $3::text) AND revoked_at IS NULL AND expires_at > $4
            ORDER BY created_at DESC, id DESC LIMIT 1
            """, [.text(sid), .text(clientID), PostgreSQLValue(deviceID), .integer(now)]).map(Self.record)
    }

    func insert(_ record: DeviceSecretRecord, codeHash: [UInt8]?, createdAt: Int64) throws {
        try connection.execute("""
            INSERT INTO device_secrets (secret_hash, sid, user_id, client_id, device_id, scope, code_hash, created_at, expires_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
            """, [.bytes(record.secretHash), .text(record.sid), .integer(record.userID), .text(record.clientID), PostgreSQLValue(record.deviceID),
                  PostgreSQLValue(record.scope.map(StoredList.encode)), PostgreSQLValue(codeHash), .integer(createdAt),
                  .integer(record.expiresAt)])
    }

    func revokeAll(sid: String, at now: Int64) throws {
        try connection.execute("UPDATE device_secrets SET revoked_at = $1 WHERE sid = $2 AND revoked_at IS NULL", [.integer(now), .text(sid)])
    }

    func revokeAll(issuedByCodeHash codeHash: [UInt8], at now: Int64) throws {
        try connection.execute("UPDATE device_secrets SET revoked_at = $1 WHERE code_hash = $2 AND revoked_at IS NULL",
                               [.integer(now), .bytes(codeHash)])
    }

    func deleteAll(userID: Int64) throws -> Int {
        try connection.execute("DELETE FROM device_secrets WHERE user_id = $1", [.integer(userID)])
    }

    static func record(_ row: PostgreSQLRow) -> DeviceSecretRecord {
        DeviceSecretRecord(secretHash: row.bytes(0), sid: row.string(1), userID: row.int(2), clientID: row.string(3),
                           deviceID: row.optionalString(4), expiresAt: row.int(5), scope: row.optionalString(6).map(StoredList.decode))
    }
}
