import SQLiteClient

extension IssuerMigrations {
    /// `clients.display_name`: what people see a client called
    /// (`ssoctl client add|update --name`), shown by the login page, the
    /// sign-out confirmation and the account page instead of the client
    /// id. NULL for none (the pages show the id); ClientRules bounds it.
    static let clientDisplayNames = Migration(version: 14, sql: """
        ALTER TABLE clients ADD COLUMN display_name TEXT;
        """)
}
