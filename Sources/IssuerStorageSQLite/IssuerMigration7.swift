import SQLiteClient

extension IssuerMigrations {
    /// `pending_authorizations.expected_subject`: the `sub` of a verified
    /// `id_token_hint` (OIDC Core §3.1.2.1). Only that user may complete the
    /// sign-in; anyone else gets `login_required` and no session.
    static let idTokenHint = Migration(version: 7, sql: """
        ALTER TABLE pending_authorizations ADD COLUMN expected_subject TEXT;
        """)
}
