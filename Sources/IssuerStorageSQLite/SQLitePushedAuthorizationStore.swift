import IssuerStorage
import SQLiteClient

/// `pushed_authorizations` (RFC 9126), by the hash of the request_uri.
final class SQLitePushedAuthorizationStore: PushedAuthorizationStore {
    let database: SQLiteDatabase
    init(database: SQLiteDatabase) { self.database = database }

    func find(requestURIHash: [UInt8]) throws -> PushedAuthorization? {
        try database.queryOne("""
            SELECT client_id, parameters, created_at, expires_at, used_at FROM pushed_authorizations WHERE request_uri_hash = ?
            """, [.blob(requestURIHash)]).map {
            PushedAuthorization(clientID: $0.string(0), parameters: $0.string(1), createdAt: $0.int(2), expiresAt: $0.int(3),
                                usedAt: $0.optionalInt(4))
        }
    }

    func insert(requestURIHash: [UInt8], clientID: String, parameters: String, createdAt: Int64, expiresAt: Int64) throws {
        try database.execute("""
            INSERT INTO pushed_authorizations (request_uri_hash, client_id, parameters, created_at, expires_at) VALUES (?, ?, ?, ?, ?)
            """, [.blob(requestURIHash), .text(clientID), .text(parameters), .integer(createdAt), .integer(expiresAt)])
    }

    /// Write units hold SQLite's write lock (BEGIN IMMEDIATE), so a second
    /// claimer runs its UPDATE after the first committed and matches nothing.
    func claim(requestURIHash: [UInt8], clientID: String, now: Int64) throws -> PushedAuthorizationClaim {
        if let row = try database.queryOne("""
            UPDATE pushed_authorizations SET used_at = ?
            WHERE request_uri_hash = ? AND used_at IS NULL AND expires_at > ? AND client_id = ?
            RETURNING parameters
            """, [.integer(now), .blob(requestURIHash), .integer(now), .text(clientID)]) {
            return .claimed(parameters: row.string(0))
        }
        guard let existing = try find(requestURIHash: requestURIHash) else { return .refused(.unknown) }
        return .refused(existing.refusal(clientID: clientID, now: now))
    }
}
