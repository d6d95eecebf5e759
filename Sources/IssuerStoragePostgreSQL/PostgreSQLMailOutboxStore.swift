import IssuerStorage
import PostgreSQLClient
import SSOCore

/// `mail_outbox`, shared by every node's sender.
final class PostgreSQLMailOutboxStore: MailOutboxStore {
    let connection: PostgreSQLConnection
    init(connection: PostgreSQLConnection) { self.connection = connection }

    static let columns = "id, kind, recipient, message, created_at, next_attempt_at, attempts, claimed_until, claimed_by"

    func enqueue(kind: OutboxMessageKind, recipient: String, message: [UInt8], now: Int64) throws -> Int64 {
        try connection.queryOne("""
            INSERT INTO mail_outbox (kind, recipient, recipient_key, message, created_at, next_attempt_at)
            VALUES ($1, $2, $3, $4, $5, $5) RETURNING id
            """, [.text(kind.rawValue), .text(recipient), .text(EmailKey.of(recipient)), .bytes(message), .integer(now)])?.int(0) ?? 0
    }

    func withhold(kind: OutboxMessageKind, recipient: String, reason: String, now: Int64) throws {
        try connection.execute("""
            INSERT INTO mail_outbox (kind, recipient, recipient_key, message, created_at, next_attempt_at, failed_at, last_error)
            VALUES ($1, $2, $3, ''::bytea, $4, $4, $4, $5)
            """, [.text(kind.rawValue), .text(recipient), .text(EmailKey.of(recipient)), .integer(now), .text(reason)])
    }

    /// Under READ COMMITTED a plain conditional UPDATE would make a second
    /// claimer wait on the first one's row locks and then, re-reading the
    /// claimed rows, take nothing while other messages wait: SKIP LOCKED
    /// passes over rows another claimer holds and takes the next ones. A
    /// row claimed and committed after this statement's snapshot is locked
    /// again and its conditions re-checked on its newest version (a live
    /// lease now), so it is left out: no row goes to two claimers.
    func claimDue(limit: Int, now: Int64, lease: Int64, claimer: String) throws -> [OutboxMessage] {
        precondition(lease > 0, "a claim needs a lease")
        guard limit > 0 else { return [] }
        return try connection.lookup("""
            UPDATE mail_outbox SET claimed_until = $1, claimed_by = $2
            WHERE id IN (SELECT id FROM mail_outbox
                         WHERE sent_at IS NULL AND failed_at IS NULL AND next_attempt_at <= $3
                           AND (claimed_until IS NULL OR claimed_until <= $3)
                         ORDER BY next_attempt_at, id LIMIT $4
                         FOR UPDATE SKIP LOCKED)
            RETURNING \(Self.columns)
            """, [.integer(now + lease), .text(claimer), .integer(now), .integer(Int64(limit))])
            .map(Self.message).sorted { ($0.nextAttemptAt, $0.id) < ($1.nextAttemptAt, $1.id) }
    }

    /// The claim `claimer` holds: its name on the row, a lease not released,
    /// the message still open. The row lock of each outcome's UPDATE orders
    /// it after a concurrent claim's, whose new `claimed_by` it then sees.
    static func held(from first: Int) -> String {
        "id = $\(first) AND claimed_by = $\(first + 1) AND claimed_until IS NOT NULL AND sent_at IS NULL AND failed_at IS NULL"
    }

    func markSent(id: Int64, claimer: String, now: Int64) throws -> Bool {
        try connection.lookupOne("""
            UPDATE mail_outbox SET sent_at = $1, attempts = attempts + 1, claimed_until = NULL WHERE \(Self.held(from: 2)) RETURNING id
            """, [.integer(now), .integer(id), .text(claimer)]) != nil
    }

    func reschedule(id: Int64, claimer: String, nextAttemptAt: Int64, error: String, now: Int64) throws -> Bool {
        try connection.lookupOne("""
            UPDATE mail_outbox SET next_attempt_at = $1, last_error = $2, attempts = attempts + 1, claimed_until = NULL, claimed_by = NULL
            WHERE \(Self.held(from: 3)) RETURNING id
            """, [.integer(max(nextAttemptAt, now)), .text(OutboxErrorText.storable(error)), .integer(id), .text(claimer)]) != nil
    }

    func markFailed(id: Int64, claimer: String, error: String, now: Int64) throws -> Bool {
        try connection.lookupOne("""
            UPDATE mail_outbox SET failed_at = $1, last_error = $2, attempts = attempts + 1, claimed_until = NULL
            WHERE \(Self.held(from: 3)) RETURNING id
            """, [.integer(now), .text(OutboxErrorText.storable(error)), .integer(id), .text(claimer)]) != nil
    }

    /// READ COMMITTED lets two units count the same 4 and both insert a
    /// fifth: the advisory lock makes the second wait for the first's
    /// commit, whose row its count then sees. The key is the first 8 bytes
    /// of a SHA-256 of the address's EmailKey, under a purpose string, so
    /// it names nothing in clear and cannot meet the migration lock's
    /// number but by a 2^-64 chance.
    func holdRecipient(_ recipient: String) throws {
        let digest = SHA256.hash(Array("gatehouse mail recipient\u{0}".utf8) + Array(EmailKey.of(recipient).utf8))
        let key = Int64(bitPattern: digest.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
        try connection.execute("SELECT 1 FROM pg_advisory_xact_lock($1)", [.integer(key)])
    }

    func recentCount(recipient: String, since: Int64) throws -> Int {
        Int(try connection.lookupOne("SELECT count(*) FROM mail_outbox WHERE recipient_key = $1 AND created_at >= $2",
                                     [.text(EmailKey.of(recipient)), .integer(since)])?.int(0) ?? 0)
    }

    func backlog(now: Int64) throws -> OutboxBacklog {
        let row = try connection.queryOne("""
            SELECT count(*), min(next_attempt_at) FROM mail_outbox WHERE sent_at IS NULL AND failed_at IS NULL AND next_attempt_at <= $1
            """, [.integer(now)])
        return OutboxBacklog(due: Int(row?.int(0) ?? 0), oldestDueAge: row?.optionalInt(1).map { now - $0 })
    }

    static func message(_ row: PostgreSQLRow) -> OutboxMessage {
        OutboxMessage(id: row.int(0), kind: OutboxMessageKind(rawValue: row.string(1)), recipient: row.string(2), message: row.bytes(3),
                      createdAt: row.int(4), nextAttemptAt: row.int(5), attempts: Int(row.int(6)), claimedUntil: row.optionalInt(7),
                      claimedBy: row.optionalString(8))
    }
}
