import SQLiteClient

extension IssuerMigrations {
    /// `mail_outbox`: messages queued in the write unit of the change that
    /// causes them, delivered at least once by a sender that claims them
    /// for a lease (MailOutboxStore). `recipient_key` is the EmailKey of
    /// the address, for the per-address count. The partial index holds only
    /// the rows a claim can still take, so claiming and the backlog stay
    /// cheap however many delivered rows wait for the sweeper.
    static let mailOutbox = Migration(version: 16, sql: """
        CREATE TABLE mail_outbox (
            id INTEGER PRIMARY KEY,
            kind TEXT NOT NULL,
            recipient TEXT NOT NULL,
            recipient_key TEXT NOT NULL,
            message BLOB NOT NULL,
            created_at INTEGER NOT NULL,
            next_attempt_at INTEGER NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0,
            claimed_until INTEGER,
            claimed_by TEXT,
            sent_at INTEGER,
            failed_at INTEGER,
            last_error TEXT
        );
        CREATE INDEX mail_outbox_due ON mail_outbox(next_attempt_at, id) WHERE sent_at IS NULL AND failed_at IS NULL;
        CREATE INDEX mail_outbox_recipient ON mail_outbox(recipient_key, created_at);
        """)
}
