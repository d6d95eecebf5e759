import SSOCore

extension IssuerMigrations {
    /// Refresh rotation with a grace window; key pre-publication. (Owner: refresh grant.)
    static let refreshRotation = Migration(version: 3, sql: """
        SELECT 1;
        """)
}
