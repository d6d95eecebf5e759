import IssuerStorage
import PostgreSQLClient

/// `account_links`. Under READ COMMITTED the redeeming UPDATE takes the
/// row's lock; a concurrent one waits, re-reads the row's newest version,
/// finds `used_at` set and updates nothing: exactly one winner, no retry.
final class PostgreSQLAccountLinkStore: AccountLinkStore {
    let connection: PostgreSQLConnection
    init(connection: PostgreSQLConnection) { self.connection = connection }

    static let columns = "purpose, user_id, expires_at, pending_request, target_email"

    func live(tokenHash: [UInt8], purpose: AccountLinkPurpose, now: Int64) throws -> AccountLink? {
        try connection.lookupOne("""
            SELECT \(Self.columns) FROM account_links WHERE token_hash = $1 AND purpose = $2 AND used_at IS NULL AND expires_at > $3
            """, [.bytes(tokenHash), .text(purpose.rawValue), .integer(now)]).map(Self.link)
    }

    func issue(_ link: NewAccountLink, voidingEarlier: Bool) throws {
        if voidingEarlier { try voidAll(userID: link.userID, purpose: link.purpose, now: link.createdAt) }
        try connection.execute("""
            INSERT INTO account_links (token_hash, purpose, user_id, created_at, expires_at, pending_request, target_email)
            VALUES ($1, $2, $3, $4, $5, $6, $7)
            """, [.bytes(link.tokenHash), .text(link.purpose.rawValue), .integer(link.userID), .integer(link.createdAt),
                  .integer(link.expiresAt), PostgreSQLValue(link.pendingRequest), PostgreSQLValue(link.targetEmail)])
    }

    func redeem(tokenHash: [UInt8], purpose: AccountLinkPurpose, now: Int64) throws -> AccountLink? {
        try connection.lookupOne("""
            UPDATE account_links SET used_at = $1 WHERE token_hash = $2 AND purpose = $3 AND used_at IS NULL AND expires_at > $1
            RETURNING \(Self.columns)
            """, [.integer(now), .bytes(tokenHash), .text(purpose.rawValue)]).map(Self.link)
    }

    @discardableResult
    func voidAll(userID: Int64, purpose: AccountLinkPurpose, now: Int64) throws -> Int {
        try connection.execute("UPDATE account_links SET used_at = $1 WHERE user_id = $2 AND purpose = $3 AND used_at IS NULL",
                               [.integer(now), .integer(userID), .text(purpose.rawValue)])
    }

    static func link(_ row: PostgreSQLRow) -> AccountLink {
        AccountLink(purpose: AccountLinkPurpose(rawValue: row.string(0)), userID: row.int(1), expiresAt: row.int(2),
                    pendingRequest: row.optionalString(3), targetEmail: row.optionalString(4))
    }
}
