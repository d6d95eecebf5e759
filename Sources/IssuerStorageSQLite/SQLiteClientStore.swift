import IssuerStorage
import SQLiteClient

/// `clients` and `client_redirect_uris`.
final class SQLiteClientStore: ClientStore {
    let database: SQLiteDatabase
    init(database: SQLiteDatabase) { self.database = database }

    func find(clientID: String) throws -> Client? {
        guard let row = try database.queryOne("SELECT client_id, secret_hash, scopes, native_sso_group FROM clients WHERE client_id = ?",
                                              [.text(clientID)]) else { return nil }
        let uris = try database.query("SELECT kind, uri FROM client_redirect_uris WHERE client_id = ? ORDER BY uri", [.text(clientID)])
        return Client(clientID: row.string(0), secretHash: row.optionalString(1), scopes: StoredList.decode(row.string(2)),
                      nativeSSOGroup: row.optionalString(3),
                      redirectURIs: uris.filter { $0.string(0) == "login" }.map { $0.string(1) },
                      postLogoutRedirectURIs: uris.filter { $0.string(0) == "post_logout" }.map { $0.string(1) })
    }

    func list() throws -> [Client] {
        try database.query("SELECT client_id FROM clients ORDER BY client_id").compactMap { try find(clientID: $0.string(0)) }
    }

    func insert(_ client: Client, at now: Int64) throws {
        try database.execute("""
            INSERT INTO clients (client_id, secret_hash, scopes, native_sso_group, created_at) VALUES (?, ?, ?, ?, ?)
            """, [.text(client.clientID), SQLiteValue(client.secretHash), .text(StoredList.encode(client.scopes)),
                  SQLiteValue(client.nativeSSOGroup), .integer(now)])
        for (kind, uris) in [("login", client.redirectURIs), ("post_logout", client.postLogoutRedirectURIs)] {
            for uri in Set(uris) {
                try database.execute("INSERT INTO client_redirect_uris (client_id, kind, uri) VALUES (?, ?, ?)",
                                     [.text(client.clientID), .text(kind), .text(uri)])
            }
        }
    }
}

/// `native_sso_groups`: settings rows of groups that clients name.
final class SQLiteNativeSSOGroupStore: NativeSSOGroupStore {
    let database: SQLiteDatabase
    init(database: SQLiteDatabase) { self.database = database }

    func allowsDeviceID(group: String) throws -> Bool {
        try database.queryOne("SELECT allow_device_id FROM native_sso_groups WHERE name = ?", [.text(group)])?.int(0) == 1
    }

    func members(group: String) throws -> [String] {
        try database.query("SELECT client_id FROM clients WHERE native_sso_group = ? ORDER BY client_id", [.text(group)]).map { $0.string(0) }
    }

    func setAllowsDeviceID(_ allowed: Bool, group: String) throws {
        try database.execute("""
            INSERT INTO native_sso_groups (name, allow_device_id) VALUES (?, ?)
            ON CONFLICT (name) DO UPDATE SET allow_device_id = excluded.allow_device_id
            """, [.text(group), SQLiteValue(allowed)])
    }
}
