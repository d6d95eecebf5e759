import IssuerStorage
import SQLiteClient

/// `account_links`. Write units take SQLite's one write lock up front
/// (BEGIN IMMEDIATE), so the redeeming UPDATE runs while no other
/// connection writes: one caller sets `used_at`, the next finds it set.
final class SQLiteAccountLinkStore: AccountLinkStore {
    let database: SQLiteDatabase
    init(database: SQLiteDatabase) { self.database = database }

    static let columns = "purpose, user_id, expires_at, pending_request, target_email"

    func live(tokenHash: [UInt8], purpose: AccountLinkPurpose, now: Int64) throws -> AccountLink? {
        try database.queryOne("""
            SELECT \(Self.columns) FROM account_links WHERE token_hash = ? AND purpose = ? AND used_at IS NULL AND expires_at > ?
            """, [.blob(tokenHash), .text(purpose.rawValue), .integer(now)]).map(Self.link)
    }

    func issue(_ link: NewAccountLink, voidingEarlier: Bool) throws {
        if voidingEarlier { try voidAll(userID: link.userID, purpose: link.purpose, now: link.createdAt) }
        try database.execute("""
            INSERT INTO account_links (token_hash, purpose, user_id, created_at, expires_at, pending_request, target_email)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            """, [.blob(link.tokenHash), .text(link.purpose.rawValue), .integer(link.userID), .integer(link.createdAt),
                  .integer(link.expiresAt), SQLiteValue(link.pendingRequest), SQLiteValue(link.targetEmail)])
    }

    func redeem(tokenHash: [UInt8], purpose: AccountLinkPurpose, now: Int64) throws -> AccountLink? {
        try database.queryOne("""
            UPDATE account_links SET used_at = ? WHERE token_hash = ? AND purpose = ? AND used_at IS NULL AND expires_at > ?
            RETURNING \(Self.columns)
            """, [.integer(now), .blob(tokenHash), .text(purpose.rawValue), .integer(now)]).map(Self.link)
    }

    @discardableResult
    func voidAll(userID: Int64, purpose: AccountLinkPurpose, now: Int64) throws -> Int {
        try database.execute("UPDATE account_links SET used_at = ? WHERE user_id = ? AND purpose = ? AND used_at IS NULL",
                             [.integer(now), .integer(userID), .text(purpose.rawValue)])
    }

    static func link(_ row: SQLiteRow) -> AccountLink {
        AccountLink(purpose: AccountLinkPurpose(rawValue: row.string(0)), userID: row.int(1), expiresAt: row.int(2),
                    pendingRequest: row.optionalString(3), targetEmail: row.optionalString(4))
    }
}
