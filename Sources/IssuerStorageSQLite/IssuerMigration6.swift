import SQLiteClient

extension IssuerMigrations {
    /// Native SSO opt-in and scope bound (the outside review's findings on
    /// the seed profile).
    ///
    /// - `native_sso_groups`: settings of a native-SSO group (the group
    ///   itself is the `clients.native_sso_group` its members name; a group
    ///   without a row has every setting at its default). `allow_device_id`
    ///   switches on the seed `device_id` profile (di_hash, device-id actor
    ///   tokens); off by default, because a device id is not a secret.
    /// - `device_secrets.scope`: the scope the sign-in granted (space-
    ///   separated), the most a token exchange from it may grant. NULL on
    ///   rows from before this migration; the exchange then bounds by the
    ///   original client's registered scopes.
    /// - A stack that already has the demo clients keeps both profiles, as
    ///   on a fresh start (DemoData): the group named `demo` is switched on
    ///   if some client is in it.
    static let nativeSSOOptIn = Migration(version: 6, sql: """
        CREATE TABLE native_sso_groups (
            name TEXT PRIMARY KEY,
            allow_device_id INTEGER NOT NULL DEFAULT 0 CHECK (allow_device_id IN (0, 1))
        );
        ALTER TABLE device_secrets ADD COLUMN scope TEXT;
        INSERT INTO native_sso_groups (name, allow_device_id)
            SELECT 'demo', 1 WHERE EXISTS (SELECT 1 FROM clients WHERE native_sso_group = 'demo');
        """)
}
