import SSOCore

/// What presenting a refresh token led to.
public enum RefreshRotationOutcome: Equatable {
    /// The token was live: it is now spent and this is its one successor.
    case rotated(successor: String, record: RefreshTokenRecord)
    /// The token was spent moments ago and its successor is still unused:
    /// the same successor again (a retry after a lost reply).
    case replayed(successor: String, record: RefreshTokenRecord)
    /// Unknown, expired, revoked, another client's, or its session ended.
    case refused(String)
    /// A spent token was presented outside the grace window, or after its
    /// successor was used: the whole family (this one) has been revoked.
    case reuseDetected(familyID: String)
}

/// Refresh token rotation (RFC 9700 §4.14.2) in one write transaction per
/// presentation, so concurrent presentations of one token serialise: the
/// first rotates, the others see it spent and, within the grace window,
/// get that same successor; there are never two live successors.
public final class RefreshTokenRotation {
    let database: SQLiteDatabase
    let store: RefreshTokenStore
    let sessions: SSOSessionStore
    let sealingKey: [UInt8]
    let clock: Clock

    public init(database: SQLiteDatabase, sealingKey: [UInt8], clock: @escaping Clock = systemClock) {
        self.database = database
        self.sealingKey = sealingKey
        self.clock = clock
        store = RefreshTokenStore(database: database, clock: clock)
        sessions = SSOSessionStore(database: database, clock: clock)
    }

    /// `check` runs on the presented token's record before anything changes;
    /// what it throws leaves the database as it was (the transaction rolls back).
    public func present(_ token: String, clientID: String, lifetime: Int, gracePeriod: Int,
                        check: (RefreshTokenRecord) throws -> Void = { _ in }) throws -> RefreshRotationOutcome {
        guard !token.isEmpty, token.utf8.count <= 256 else { return .refused("unknown refresh token") }
        let hash = SecretHash.of(token)
        return try database.transaction {
            guard let row = try database.queryOne("""
                SELECT family_id, client_id, user_id, sid, scope, auth_time, expires_at, used_at, revoked_at, successor_hash, successor_sealed
                FROM refresh_tokens WHERE token_hash = ?
                """, [.blob(hash)]) else { return .refused("unknown refresh token") }
            let now = clock()
            let record = RefreshTokenRecord(familyID: row.string(0), clientID: row.string(1), userID: row.int(2), sid: row.string(3),
                                            scope: row.string(4).split(separator: " ").map(String.init), authTime: row.int(5),
                                            expiresAt: row.int(6))
            // RFC 6749 §6: the server MUST "validate the refresh token" and
            // check it "was issued to the authenticated client".
            guard record.clientID.bytesEqual(clientID) else { return .refused("the refresh token was issued to another client") }
            guard row.optionalInt(8) == nil else { return .refused("the refresh token was revoked") }
            guard record.expiresAt > now else { return .refused("the refresh token has expired") }
            guard try sessions.find(sid: record.sid) != nil else { return .refused("the sign-in session has ended") }
            try check(record)

            if let usedAt = row.optionalInt(7) {
                if now - usedAt <= Int64(gracePeriod), let successor = try unusedSuccessor(of: row, spentHash: hash) {
                    return .replayed(successor: successor.token, record: successor.record)
                }
                // RFC 9700 §4.14.2: "If a refresh token is compromised and
                // subsequently used by both the attacker and the legitimate
                // client, one of them will present an invalidated refresh
                // token, which will inform the authorization server of the
                // breach." Revoke the family; this commits.
                try store.revokeFamily(record.familyID)
                return .reuseDetected(familyID: record.familyID)
            }

            // RFC 6749 §6: "If a new refresh token is issued, the refresh token
            // scope MUST be identical to that of the refresh token included by
            // the client in the request." The successor keeps the family.
            let issued = try store.issue(familyID: record.familyID, clientID: clientID, userID: record.userID, sid: record.sid,
                                         scope: record.scope, authTime: record.authTime, lifetime: lifetime)
            let sealed = gracePeriod > 0 ? try AESGCM.seal(Array(issued.token.utf8), key: sealingKey, authenticating: hash) : nil
            try database.execute("""
                UPDATE refresh_tokens SET used_at = ?, successor_hash = ?, successor_sealed = ? WHERE token_hash = ? AND used_at IS NULL
                """, [.integer(now), .blob(SecretHash.of(issued.token)), sealed.map { .blob($0) } ?? .null, .blob(hash)])
            return .rotated(successor: issued.token, record: issued.record)
        }
    }

    /// The spent token's successor when it is still live and unused, opened
    /// from its sealed copy; nil when the window has passed or it was used.
    func unusedSuccessor(of row: SQLiteRow, spentHash: [UInt8]) throws -> (token: String, record: RefreshTokenRecord)? {
        guard let sealed = row[10].bytes, let successorHash = row[9].bytes,
              let successor = try database.queryOne("""
                  SELECT family_id, client_id, user_id, sid, scope, auth_time, expires_at FROM refresh_tokens
                  WHERE token_hash = ? AND used_at IS NULL AND revoked_at IS NULL
                  """, [.blob(successorHash)]),
              let opened = try? AESGCM.open(sealed, key: sealingKey, authenticating: spentHash),
              let token = String(validating: opened, as: UTF8.self),
              ConstantTime.equals(SecretHash.of(token), successorHash) else { return nil }
        let record = RefreshTokenRecord(familyID: successor.string(0), clientID: successor.string(1), userID: successor.int(2),
                                        sid: successor.string(3), scope: successor.string(4).split(separator: " ").map(String.init),
                                        authTime: successor.int(5), expiresAt: successor.int(6))
        return (token, record)
    }
}
