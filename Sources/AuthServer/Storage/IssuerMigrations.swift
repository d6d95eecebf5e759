/// The issuer's schema migrations, one file each, listed in order by
/// `IssuerSchema.migrations`.
public enum IssuerMigrations {}
