import IssuerStorage
import SQLiteClient

/// `mail_outbox`. Write units take SQLite's one write lock up front (BEGIN
/// IMMEDIATE), so a claim's UPDATE runs while no other connection writes:
/// no two claimers can both see a message unclaimed.
final class SQLiteMailOutboxStore: MailOutboxStore {
    let database: SQLiteDatabase
    init(database: SQLiteDatabase) { self.database = database }

    static let columns = "id, kind, recipient, message, created_at, next_attempt_at, attempts, claimed_until, claimed_by"

    func enqueue(kind: OutboxMessageKind, recipient: String, message: [UInt8], now: Int64) throws -> Int64 {
        try database.queryOne("""
            INSERT INTO mail_outbox (kind, recipient, recipient_key, message, created_at, next_attempt_at)
            VALUES (?1, ?2, ?3, ?4, ?5, ?5) RETURNING id
            """, [.text(kind.rawValue), .text(recipient), .text(EmailKey.of(recipient)), .blob(message), .integer(now)])?.int(0) ?? 0
    }

    func withhold(kind: OutboxMessageKind, recipient: String, reason: String, now: Int64) throws {
        try database.execute("""
            INSERT INTO mail_outbox (kind, recipient, recipient_key, message, created_at, next_attempt_at, failed_at, last_error)
            VALUES (?1, ?2, ?3, x'', ?4, ?4, ?4, ?5)
            """, [.text(kind.rawValue), .text(recipient), .text(EmailKey.of(recipient)), .integer(now), .text(reason)])
    }

    func claimDue(limit: Int, now: Int64, lease: Int64, claimer: String) throws -> [OutboxMessage] {
        precondition(lease > 0, "a claim needs a lease")
        guard limit > 0 else { return [] }
        // RETURNING yields rows in no promised order: sorted here.
        return try database.query(Self.claimSQL, [.integer(now + lease), .text(claimer), .integer(now), .integer(Int64(limit))])
            .map(Self.message).sorted { ($0.nextAttemptAt, $0.id) < ($1.nextAttemptAt, $1.id) }
    }

    // MARK: The statements whose plans matter (SQLiteIssuerSchemaTests)

    /// Walks `mail_outbox_due`, which holds only open messages, in the
    /// claim's order: delivered rows waiting for the sweeper cost nothing.
    static let claimSQL = """
        UPDATE mail_outbox SET claimed_until = ?1, claimed_by = ?2
        WHERE id IN (SELECT id FROM mail_outbox
                     WHERE sent_at IS NULL AND failed_at IS NULL AND next_attempt_at <= ?3
                       AND (claimed_until IS NULL OR claimed_until <= ?3)
                     ORDER BY next_attempt_at, id LIMIT ?4)
        RETURNING \(columns)
        """
    static let recentCountSQL = "SELECT count(*) FROM mail_outbox WHERE recipient_key = ? AND created_at >= ?"
    static let backlogSQL = """
        SELECT count(*), min(next_attempt_at) FROM mail_outbox WHERE sent_at IS NULL AND failed_at IS NULL AND next_attempt_at <= ?
        """

    /// The claim `claimer` holds: its name on the row, a lease not released,
    /// the message still open.
    static let heldBy = "id = ? AND claimed_by = ? AND claimed_until IS NOT NULL AND sent_at IS NULL AND failed_at IS NULL"

    func markSent(id: Int64, claimer: String, now: Int64) throws -> Bool {
        try database.execute("UPDATE mail_outbox SET sent_at = ?, attempts = attempts + 1, claimed_until = NULL WHERE \(Self.heldBy)",
                             [.integer(now), .integer(id), .text(claimer)]) == 1
    }

    func reschedule(id: Int64, claimer: String, nextAttemptAt: Int64, error: String, now: Int64) throws -> Bool {
        try database.execute("""
            UPDATE mail_outbox SET next_attempt_at = ?, last_error = ?, attempts = attempts + 1, claimed_until = NULL, claimed_by = NULL
            WHERE \(Self.heldBy)
            """, [.integer(max(nextAttemptAt, now)), .text(OutboxErrorText.storable(error)), .integer(id), .text(claimer)]) == 1
    }

    func markFailed(id: Int64, claimer: String, error: String, now: Int64) throws -> Bool {
        try database.execute("""
            UPDATE mail_outbox SET failed_at = ?, last_error = ?, attempts = attempts + 1, claimed_until = NULL WHERE \(Self.heldBy)
            """, [.integer(now), .text(OutboxErrorText.storable(error)), .integer(id), .text(claimer)]) == 1
    }

    /// `BEGIN IMMEDIATE` took the write lock already: units are one at a time.
    func holdRecipient(_ recipient: String) throws {}

    func recentCount(recipient: String, since: Int64) throws -> Int {
        Int(try database.queryOne(Self.recentCountSQL, [.text(EmailKey.of(recipient)), .integer(since)])?.int(0) ?? 0)
    }

    func backlog(now: Int64) throws -> OutboxBacklog {
        let row = try database.queryOne(Self.backlogSQL, [.integer(now)])
        return OutboxBacklog(due: Int(row?.int(0) ?? 0), oldestDueAge: row?.optionalInt(1).map { now - $0 })
    }

    static func message(_ row: SQLiteRow) -> OutboxMessage {
        OutboxMessage(id: row.int(0), kind: OutboxMessageKind(rawValue: row.string(1)), recipient: row.string(2), message: row.bytes(3),
                      createdAt: row.int(4), nextAttemptAt: row.int(5), attempts: Int(row.int(6)), claimedUntil: row.optionalInt(7),
                      claimedBy: row.optionalString(8))
    }
}
