import IssuerStorage
import SQLiteClient

/// `clients` and `client_redirect_uris`.
final class SQLiteClientStore: ClientStore {
    let database: SQLiteDatabase
    init(database: SQLiteDatabase) { self.database = database }

    static let columns = """
        client_id, secret_hash, scopes, native_sso_group, grant_types, require_dpop, require_par, access_token_lifetime,
        refresh_token_lifetime, ios_app_id, android_package, android_cert_fingerprints, display_name, registration_id,
        backchannel_logout_uri, token_endpoint_auth_method, jwks, jwks_uri, require_signed_request_object, profile,
        id_token_signed_response_alg, registration_access_token_hash
        """

    func find(clientID: String) throws -> Client? {
        guard let row = try database.queryOne("SELECT \(Self.columns) FROM clients WHERE client_id = ?", [.text(clientID)]) else { return nil }
        let uris = try database.query("SELECT kind, uri FROM client_redirect_uris WHERE client_id = ? ORDER BY uri", [.text(clientID)])
        return Client(clientID: row.string(0), secretHash: row.optionalString(1), scopes: StoredList.decode(row.string(2)),
                      nativeSSOGroup: row.optionalString(3),
                      redirectURIs: uris.filter { $0.string(0) == "login" }.map { $0.string(1) },
                      postLogoutRedirectURIs: uris.filter { $0.string(0) == "post_logout" }.map { $0.string(1) },
                      grantTypes: StoredList.decode(row.string(4)), requireDPoP: row.int(5) != 0, requirePAR: row.int(6) != 0,
                      accessTokenLifetime: row.optionalInt(7).map(Int.init), refreshTokenLifetime: row.optionalInt(8).map(Int.init),
                      iosAppID: row.optionalString(9), androidPackage: row.optionalString(10),
                      androidCertificateFingerprints: StoredList.decode(row.string(11)), displayName: row.optionalString(12),
                      registrationID: row.string(13), backchannelLogoutURI: row.optionalString(14),
                      authMethod: row.optionalString(15), jwks: row.optionalString(16), jwksURI: row.optionalString(17),
                      requireSignedRequestObject: row.int(18) != 0, profile: row.optionalString(19),
                      idTokenAlgorithm: row.optionalString(20), registrationAccessTokenHash: row.optionalBytes(21))
    }

    func list() throws -> [Client] {
        try database.query("SELECT client_id FROM clients ORDER BY client_id").compactMap { try find(clientID: $0.string(0)) }
    }

    func insert(_ client: Client, at now: Int64) throws {
        try database.execute("""
            INSERT INTO clients (client_id, created_at, scopes, grant_types, registration_id) VALUES (?, ?, '', '', ?)
            """, [.text(client.clientID), .integer(now), .text(client.registrationID)])
        _ = try update(client)
    }

    func update(_ client: Client) throws -> Bool {
        let changed = try database.execute("""
            UPDATE clients SET secret_hash = ?, scopes = ?, native_sso_group = ?, grant_types = ?, require_dpop = ?, require_par = ?,
                access_token_lifetime = ?, refresh_token_lifetime = ?, ios_app_id = ?, android_package = ?, android_cert_fingerprints = ?,
                display_name = ?, backchannel_logout_uri = ?, token_endpoint_auth_method = ?, jwks = ?, jwks_uri = ?,
                require_signed_request_object = ?, profile = ?, id_token_signed_response_alg = ?,
                registration_access_token_hash = ?
            WHERE client_id = ?
            """, [SQLiteValue(client.secretHash), .text(StoredList.encode(client.scopes)), SQLiteValue(client.nativeSSOGroup),
                  .text(StoredList.encode(client.grantTypes)), SQLiteValue(client.requireDPoP), SQLiteValue(client.requirePAR),
                  Self.optional(client.accessTokenLifetime), Self.optional(client.refreshTokenLifetime), SQLiteValue(client.iosAppID),
                  SQLiteValue(client.androidPackage), .text(StoredList.encode(client.androidCertificateFingerprints)),
                  SQLiteValue(client.displayName), SQLiteValue(client.backchannelLogoutURI), SQLiteValue(client.authMethod),
                  SQLiteValue(client.jwks), SQLiteValue(client.jwksURI), SQLiteValue(client.requireSignedRequestObject),
                  SQLiteValue(client.profile), SQLiteValue(client.idTokenAlgorithm),
                  client.registrationAccessTokenHash.map { .blob($0) } ?? .null, .text(client.clientID)])
        guard changed == 1 else { return false }
        try database.execute("DELETE FROM client_redirect_uris WHERE client_id = ?", [.text(client.clientID)])
        for (kind, uris) in [("login", client.redirectURIs), ("post_logout", client.postLogoutRedirectURIs)] {
            for uri in Set(uris) {
                try database.execute("INSERT INTO client_redirect_uris (client_id, kind, uri) VALUES (?, ?, ?)",
                                     [.text(client.clientID), .text(kind), .text(uri)])
            }
        }
        return true
    }

    func delete(clientID: String) throws -> Bool {
        for table in ["refresh_tokens", "authorization_codes", "device_secrets", "pending_authorizations", "pushed_authorizations"] {
            try database.execute("DELETE FROM \(table) WHERE client_id = ?", [.text(clientID)])
        }
        return try database.execute("DELETE FROM clients WHERE client_id = ?", [.text(clientID)]) == 1
    }

    static func optional(_ value: Int?) -> SQLiteValue { value.map { .integer(Int64($0)) } ?? .null }
}

/// `apis` and `api_scopes`.
final class SQLiteAPIStore: APIStore {
    let database: SQLiteDatabase
    init(database: SQLiteDatabase) { self.database = database }

    func list() throws -> [RegisteredAPI] {
        let scopes = try database.query("SELECT audience, scope FROM api_scopes ORDER BY scope")
        return try database.query("SELECT audience, name FROM apis ORDER BY audience").map { row in
            let audience = row.string(0)
            return RegisteredAPI(audience: audience, name: row.string(1),
                                 scopes: scopes.filter { $0.string(0).utf8.elementsEqual(audience.utf8) }.map { $0.string(1) })
        }
    }

    func insert(_ api: RegisteredAPI, at now: Int64) throws {
        try database.execute("INSERT INTO apis (audience, name, created_at) VALUES (?, ?, ?)", [.text(api.audience), .text(api.name), .integer(now)])
        for scope in api.scopes {
            try database.execute("INSERT INTO api_scopes (scope, audience) VALUES (?, ?)", [.text(scope), .text(api.audience)])
        }
    }

    func remove(audience: String) throws -> Bool {
        try database.execute("DELETE FROM api_scopes WHERE audience = ?", [.text(audience)])
        return try database.execute("DELETE FROM apis WHERE audience = ?", [.text(audience)]) == 1
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
