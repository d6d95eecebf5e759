import SQLiteClient

extension IssuerMigrations {
    /// `account_links.target_email`: the address an email-change link moves
    /// the account to (or a revert link moves it back to). The change is
    /// stored with its link, not on the account, so it counts only once
    /// the new address has proved itself.
    static let emailChangeLinks = Migration(version: 19, sql: """
        ALTER TABLE account_links ADD COLUMN target_email TEXT;
        """)
}
