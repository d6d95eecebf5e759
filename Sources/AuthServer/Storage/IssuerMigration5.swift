import SSOCore

extension IssuerMigrations {
    /// TOTP and login throttling. (Owner: account security.)
    static let accountSecurity = Migration(version: 5, sql: """
        SELECT 1;
        """)
}
