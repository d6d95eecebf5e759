import IssuerStorage
import PostgreSQLClient

/// `initial_access_tokens`: the row lock of one conditional UPDATE decides
/// between nodes spending a token's last use.
final class PostgreSQLInitialAccessTokenStore: InitialAccessTokenStore {
    let connection: PostgreSQLConnection
    init(connection: PostgreSQLConnection) { self.connection = connection }

    func insert(tokenHash: [UInt8], createdAt: Int64, expiresAt: Int64, uses: Int64) throws {
        try connection.execute("""
            INSERT INTO initial_access_tokens (token_hash, created_at, expires_at, uses_left) VALUES ($1, $2, $3, $4)
            """, [.bytes(tokenHash), .integer(createdAt), .integer(expiresAt), .integer(uses)])
    }

    func isUsable(tokenHash: [UInt8], now: Int64) throws -> Bool {
        try connection.queryOne("SELECT 1 FROM initial_access_tokens WHERE token_hash = $1 AND expires_at > $2 AND uses_left > 0",
                                [.bytes(tokenHash), .integer(now)]) != nil
    }

    func consume(tokenHash: [UInt8], now: Int64) throws -> Bool {
        try connection.execute("""
            UPDATE initial_access_tokens SET uses_left = uses_left - 1 WHERE token_hash = $1 AND expires_at > $2 AND uses_left > 0
            """, [.bytes(tokenHash), .integer(now)]) == 1
    }
}
