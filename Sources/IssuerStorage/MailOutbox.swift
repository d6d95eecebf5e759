/// What a queued message is for: a short label, the `kind` of the
/// `gatehouse_mail_sent_total{kind,result}` metric. Open (a struct, not an
/// enum) so a row written by a newer build still reads.
public struct OutboxMessageKind: RawRepresentable, Hashable, Sendable {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let verification = Self(rawValue: "verification")
    public static let passwordReset = Self(rawValue: "password_reset")
    public static let invitation = Self(rawValue: "invitation")
    /// The link that moves an account to a new address, sent to that address.
    public static let emailChange = Self(rawValue: "email_change")
    /// "Someone tried to sign up with your address", and the like.
    public static let notice = Self(rawValue: "notice")
    /// `ssoctl`'s test message.
    public static let test = Self(rawValue: "test")
    /// Not mail: an OpenID Connect Back-Channel Logout notice for the
    /// client named as `recipient`, the ended session as JSON as `message`
    /// (BackchannelLogoutQueue). The same sender delivers it by HTTPS.
    public static let backchannelLogout = Self(rawValue: "backchannel_logout")
}

/// One queued message as the sender claimed it.
public struct OutboxMessage: Equatable, Sendable {
    public let id: Int64
    public let kind: OutboxMessageKind
    /// The address as the caller gave it (the envelope's recipient).
    public let recipient: String
    /// The whole message, serialized before it was queued, sent as it is.
    public let message: [UInt8]
    public let createdAt: Int64
    public let nextAttemptAt: Int64
    /// Delivery attempts that ended (rescheduled, sent or failed).
    public let attempts: Int
    /// The claim's lease: until then no other sender takes the row.
    public let claimedUntil: Int64?
    public let claimedBy: String?

    public init(id: Int64, kind: OutboxMessageKind, recipient: String, message: [UInt8], createdAt: Int64, nextAttemptAt: Int64,
                attempts: Int, claimedUntil: Int64?, claimedBy: String?) {
        self.id = id
        self.kind = kind
        self.recipient = recipient
        self.message = message
        self.createdAt = createdAt
        self.nextAttemptAt = nextAttemptAt
        self.attempts = attempts
        self.claimedUntil = claimedUntil
        self.claimedBy = claimedBy
    }
}

/// The queue's depth, for a metric and an alert.
public struct OutboxBacklog: Equatable, Sendable {
    /// Messages neither sent nor failed whose next attempt is due (claimed
    /// ones included: they are not delivered yet).
    public let due: Int
    /// How long the most overdue of them has been due (`now` minus its
    /// `next_attempt_at`), nil when none is: near 0 while a sender keeps up,
    /// growing while none runs. Messages waiting out a backoff are not due
    /// and do not count.
    public let oldestDueAge: Int64?

    public init(due: Int, oldestDueAge: Int64?) {
        self.due = due
        self.oldestDueAge = oldestDueAge
    }
}

/// The mail outbox, read side: counts only (the rows themselves go to the
/// sender through `claimDue`).
public protocol MailOutboxReads {
    /// Messages queued for `recipient` at or after `since`, in any state:
    /// the "at most 5 messages per address per hour" rule. Addresses are
    /// compared by `EmailKey` (ASCII letters folded), as accounts are, so
    /// `Alice@Example.com` and `alice@example.com` share one count. The key
    /// is a column of its own, made in Swift at `enqueue`: folding in SQL
    /// would differ between the backends (PostgreSQL's `lower()` follows the
    /// database's collation, SQLite's folds ASCII only), and a plain column
    /// takes a plain index, which the count reads instead of the table.
    func recentCount(recipient: String, since: Int64) throws -> Int
    func backlog(now: Int64) throws -> OutboxBacklog
}

/// The mail outbox: messages queued in the write unit of the change that
/// causes them (a rolled-back sign-up mails nothing), delivered at least
/// once by a sender that claims them for a lease.
///
/// The sender's claim is a write of its own: `claimDue` in a short write
/// unit, the unit committed, then the messages sent outside any transaction
/// (an SMTP conversation must not hold the SQLite write lock or a
/// PostgreSQL row lock), then each outcome (`markSent`, `reschedule`,
/// `markFailed`) in another short unit:
///
///     let batch = try storage.write { try $0.mailOutbox.claimDue(limit: 10, now: now, lease: 300, claimer: node) }
///     for message in batch { /* send */ try storage.write { _ = try $0.mailOutbox.markSent(id: message.id, claimer: node, now: now) } }
///
/// A sender that dies holding a claim loses it when the lease passes and
/// the row is claimed again (at least once, never lost); the lease must be
/// longer than the slowest send. Outcomes are taken only from the sender
/// that holds the claim: one whose lease passed and was taken over is
/// refused, and its late report changes nothing.
public protocol MailOutboxStore: MailOutboxReads {
    /// Queues `message` for `recipient`, due at `now`, in the caller's write
    /// unit: it exists when the unit commits, and never if it rolls back.
    /// Returns its id. `message` is the serialized message (non-empty).
    func enqueue(kind: OutboxMessageKind, recipient: String, message: [UInt8], now: Int64) throws -> Int64

    /// Records a message that is not sent (a reset asked for an address
    /// with no account): a row already failed at `now` with `reason`, and no
    /// message bytes, which no sender ever claims. It counts toward the
    /// address's `recentCount` like a queued one, and it makes the write
    /// unit commit a row as a queued message's does, so the answer to an
    /// unknown address takes as long as the answer to a known one.
    func withhold(kind: OutboxMessageKind, recipient: String, reason: String, now: Int64) throws

    /// Holds `recipient` (by EmailKey) until the caller's write unit ends:
    /// another unit asking for the same address waits, so a per-address
    /// limit's `recentCount` and the `enqueue` after it see every message
    /// the other unit queued. SQLite: nothing to do (a write unit holds the
    /// one write lock from its start). PostgreSQL: a transaction-scoped
    /// advisory lock on a 64-bit key made from the address.
    func holdRecipient(_ recipient: String) throws

    /// Claims up to `limit` messages that are neither sent nor failed, due
    /// (`next_attempt_at <= now`) and under no live lease (none, or one
    /// that ended at or before `now`), the most overdue first (then by id):
    /// each gets the lease `claimed_until = now + lease`, `claimed_by =
    /// claimer`. One atomic statement: of concurrent claimers, on any
    /// connection or node, no message goes to two. `claimer` names the
    /// sender (node and process) and must differ between senders that run
    /// at once. `lease` > 0; `limit` <= 0 claims nothing.
    func claimDue(limit: Int, now: Int64, lease: Int64, claimer: String) throws -> [OutboxMessage]

    /// Records the claimed message delivered at `now`. True when `claimer`
    /// holds its claim (its lease may have passed, as long as no other
    /// sender took the message over: the message went out, and sending it
    /// again would be the duplicate the claim is there to prevent); false,
    /// changing nothing, otherwise.
    func markSent(id: Int64, claimer: String, now: Int64) throws -> Bool

    /// Records a temporary failure (the server down, a 4xx): one more
    /// attempt, the lease released, the message due again at
    /// `nextAttemptAt` (the sender's backoff; never before `now`), `error`
    /// kept as its last. True when `claimer` holds the claim, as for
    /// `markSent`.
    func reschedule(id: Int64, claimer: String, nextAttemptAt: Int64, error: String, now: Int64) throws -> Bool

    /// Records a permanent failure (a 5xx, or retries given up): one more
    /// attempt, never claimed again, `error` kept. True when `claimer` holds
    /// the claim, as for `markSent`.
    func markFailed(id: Int64, claimer: String, error: String, now: Int64) throws -> Bool
}

/// What both backends do to an outcome's error text before storing it, so
/// both keep the same `last_error`.
public enum OutboxErrorText {
    /// Longest `last_error` kept, in characters: the caller's text is
    /// already log-safe (a reply code and line, never credentials or the
    /// message); the bound keeps a chatty server from filling the row.
    public static let limit = 500

    /// Bounded, and without NUL (PostgreSQL text refuses it, which would
    /// turn an outcome into an error): a server's reply is not ours to trust.
    public static func storable(_ text: String) -> String {
        let clean = text.utf8.contains(0) ? text.replacing("\u{0}", with: "") : text
        return clean.count <= limit ? clean : String(clean.prefix(limit))
    }
}
