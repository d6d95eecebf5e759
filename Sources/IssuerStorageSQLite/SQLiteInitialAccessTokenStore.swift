import IssuerStorage
import SQLiteClient

/// `initial_access_tokens`: a use is spent by one conditional UPDATE, so
/// two registrations never share a token's last use.
final class SQLiteInitialAccessTokenStore: InitialAccessTokenStore {
    let database: SQLiteDatabase
    init(database: SQLiteDatabase) { self.database = database }

    func insert(tokenHash: [UInt8], createdAt: Int64, expiresAt: Int64, uses: Int64) throws {
        try database.execute("INSERT INTO initial_access_tokens (token_hash, created_at, expires_at, uses_left) VALUES (?, ?, ?, ?)",
                             [.blob(tokenHash), .integer(createdAt), .integer(expiresAt), .integer(uses)])
    }

    func isUsable(tokenHash: [UInt8], now: Int64) throws -> Bool {
        try database.queryOne("SELECT 1 FROM initial_access_tokens WHERE token_hash = ? AND expires_at > ? AND uses_left > 0",
                              [.blob(tokenHash), .integer(now)]) != nil
    }

    func consume(tokenHash: [UInt8], now: Int64) throws -> Bool {
        try database.execute("""
            UPDATE initial_access_tokens SET uses_left = uses_left - 1 WHERE token_hash = ? AND expires_at > ? AND uses_left > 0
            """, [.blob(tokenHash), .integer(now)]) == 1
    }
}
