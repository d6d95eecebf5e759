/// The issuer's schema migrations, one file each, listed in order by
/// `SQLiteIssuerSchema.migrations`.
public enum IssuerMigrations {}
