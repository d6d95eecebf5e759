import IssuerStorage
import PostgreSQLClient

/// `pushed_authorizations` (RFC 9126), by the hash of the request_uri.
final class PostgreSQLPushedAuthorizationStore: PushedAuthorizationStore {
    let connection: PostgreSQLConnection
    init(connection: PostgreSQLConnection) { self.connection = connection }

    func find(requestURIHash: [UInt8]) throws -> PushedAuthorization? {
        try connection.lookupOne("""
            SELECT client_id, parameters, created_at, expires_at, used_at FROM pushed_authorizations WHERE request_uri_hash = $1
            """, [.bytes(requestURIHash)]).map {
            PushedAuthorization(clientID: $0.string(0), parameters: $0.string(1), createdAt: $0.int(2), expiresAt: $0.int(3),
                                usedAt: $0.optionalInt(4))
        }
    }

    func insert(requestURIHash: [UInt8], clientID: String, parameters: String, createdAt: Int64, expiresAt: Int64) throws {
        try connection.execute("""
            INSERT INTO pushed_authorizations (request_uri_hash, client_id, parameters, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)
            """, [.bytes(requestURIHash), .text(clientID), .text(parameters), .integer(createdAt), .integer(expiresAt)])
    }

    /// The row lock of the UPDATE decides: a concurrent claim waits for the
    /// winner's commit, re-reads the row, finds `used_at` set, and updates
    /// nothing. A client id holding NUL names no row (`lookupOne`).
    func claim(requestURIHash: [UInt8], clientID: String, now: Int64) throws -> PushedAuthorizationClaim {
        if let row = try connection.lookupOne("""
            UPDATE pushed_authorizations SET used_at = $1
            WHERE request_uri_hash = $2 AND used_at IS NULL AND expires_at > $1 AND client_id = $3
            RETURNING parameters
            """, [.integer(now), .bytes(requestURIHash), .text(clientID)]) {
            return .claimed(parameters: row.string(0))
        }
        guard let existing = try find(requestURIHash: requestURIHash) else { return .refused(.unknown) }
        return .refused(existing.refusal(clientID: clientID, now: now))
    }
}
