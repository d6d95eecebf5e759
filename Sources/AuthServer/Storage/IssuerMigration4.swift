import SSOCore

extension IssuerMigrations {
    /// userinfo, logout, revocation, introspection. (Owner: session endpoints.)
    static let sessionEndpoints = Migration(version: 4, sql: """
        SELECT 1;
        """)
}
