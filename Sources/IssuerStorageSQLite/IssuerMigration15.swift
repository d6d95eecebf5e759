import SQLiteClient

extension IssuerMigrations {
    /// `clients.registration_id`: a random id of this registration of the
    /// client id, which every access token carries (`client_registration`),
    /// so a client deleted and registered again under the same id does not
    /// bring its old tokens back at userinfo and introspection. Existing
    /// clients get one each here; new ones from ClientRegistry.add.
    static let clientRegistrations = Migration(version: 15, sql: """
        ALTER TABLE clients ADD COLUMN registration_id TEXT NOT NULL DEFAULT '';
        UPDATE clients SET registration_id = lower(hex(randomblob(16)));
        """)
}
