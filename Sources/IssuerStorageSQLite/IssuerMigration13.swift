import SQLiteClient

extension IssuerMigrations {
    /// `issuer_changes.generation`: moves with every change to what the
    /// responders cache (clients and their redirect URIs, APIs and their
    /// scopes, Native SSO groups, signing keys), bumped by triggers so no
    /// writer, `ssoctl` included, can forget it. IssuerStorage.changeMarker
    /// reads it once `PRAGMA data_version` says another connection has
    /// committed anything: under load the token responders commit all the
    /// time, and a marker that moved with every refresh made each one reload
    /// the client, the APIs and the signing keys.
    static let settingsChanges: Migration = {
        let watched = ["clients", "client_redirect_uris", "apis", "api_scopes", "native_sso_groups", "signing_keys"]
        let triggers = watched.flatMap { table in
            ["INSERT", "UPDATE", "DELETE"].map { event in
                """
                CREATE TRIGGER \(table)_\(event.lowercased())_changes AFTER \(event) ON \(table)
                BEGIN UPDATE issuer_changes SET generation = generation + 1 WHERE id = 1; END;
                """
            }
        }
        return Migration(version: 13, sql: """
            CREATE TABLE issuer_changes (
                id INTEGER PRIMARY KEY CHECK (id = 1),
                generation INTEGER NOT NULL
            );
            INSERT INTO issuer_changes (id, generation) VALUES (1, 0);

            """ + triggers.joined(separator: "\n"))
    }()
}
