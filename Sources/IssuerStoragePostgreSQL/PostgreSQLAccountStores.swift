import IssuerStorage
import PostgreSQLClient

/// `users`: looked up by `email_key`, the ASCII-folded email (EmailKey).
final class PostgreSQLUserStore: UserStore {
    let connection: PostgreSQLConnection
    init(connection: PostgreSQLConnection) { self.connection = connection }

    static let columns = "id, subject, email, name, password_hash, roles, disabled, email_verified"

    func find(email: String) throws -> User? {
        try connection.lookupOne("SELECT \(Self.columns) FROM users WHERE email_key = $1", [.text(EmailKey.of(email))]).map { Self.user($0) }
    }

    func find(id: Int64) throws -> User? {
        try connection.lookupOne("SELECT \(Self.columns) FROM users WHERE id = $1", [.integer(id)]).map { Self.user($0) }
    }

    func find(subject: String) throws -> User? {
        try connection.lookupOne("SELECT \(Self.columns) FROM users WHERE subject = $1", [.text(subject)]).map { Self.user($0) }
    }

    func list() throws -> [User] {
        try connection.lookup("SELECT \(Self.columns) FROM users ORDER BY email_key").map { Self.user($0) }
    }

    func page(afterID: Int64, limit: Int) throws -> [User] {
        try connection.lookup("SELECT \(Self.columns) FROM users WHERE id > $1 ORDER BY id LIMIT $2", [.integer(afterID), .integer(Int64(limit))])
            .map { Self.user($0) }
    }

    func insert(_ user: NewUser) throws -> User {
        let row = try connection.queryOne("""
            INSERT INTO users (subject, email, email_key, name, password_hash, roles, created_at, email_verified)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING \(Self.columns)
            """, [.text(user.subject), .text(user.email), .text(EmailKey.of(user.email)), .text(user.name), .text(user.passwordHash),
                  .text(StoredList.encode(user.roles)), .integer(user.createdAt), PostgreSQLValue(user.emailVerified)])
        return Self.user(row!)
    }

    func setPasswordHash(_ hash: String, userID: Int64) throws {
        try connection.execute("UPDATE users SET password_hash = $1 WHERE id = $2", [.text(hash), .integer(userID)])
    }

    func setDisabled(_ disabled: Bool, userID: Int64) throws {
        try connection.execute("UPDATE users SET disabled = $1 WHERE id = $2", [PostgreSQLValue(disabled), .integer(userID)])
    }

    func markEmailVerified(userID: Int64) throws -> Bool {
        try connection.execute("UPDATE users SET email_verified = 1 WHERE id = $1 AND email_verified = 0", [.integer(userID)]) == 1
    }

    func update(name: String?, roles: [String]?, userID: Int64) throws -> User? {
        try connection.queryOne("""
            UPDATE users SET name = coalesce($1::text, name), roles = coalesce($2::text, roles) WHERE id = $3 RETURNING \(Self.columns)
            """, [PostgreSQLValue(name), PostgreSQLValue(roles.map(StoredList.encode)), .integer(userID)]).map { Self.user($0) }
    }

    func changeEmail(_ email: String, userID: Int64) throws -> User? {
        try connection.queryOne("UPDATE users SET email = $1, email_key = $2, email_verified = 1 WHERE id = $3 RETURNING \(Self.columns)",
                                [.text(email), .text(EmailKey.of(email)), .integer(userID)]).map { Self.user($0) }
    }

    /// `totp_credentials` goes by ON DELETE CASCADE; `sso_sessions` has no
    /// cascade and refuses (SQLSTATE 23503).
    func delete(userID: Int64) throws -> Bool {
        try connection.execute("DELETE FROM users WHERE id = $1", [.integer(userID)]) == 1
    }

    /// `columns`, from column `first` of `row` on.
    static func user(_ row: PostgreSQLRow, from first: Int = 0) -> User {
        User(id: row.int(first), subject: row.string(first + 1), email: row.string(first + 2), name: row.string(first + 3),
             passwordHash: row.string(first + 4), roles: StoredList.decode(row.string(first + 5)), disabled: row.int(first + 6) != 0,
             emailVerified: row.int(first + 7) != 0)
    }
}

/// `totp_credentials`: one sealed seed per user; `totp_recovery_codes`:
/// the hashes of its unused recovery codes.
final class PostgreSQLTOTPStore: TOTPStore {
    let connection: PostgreSQLConnection
    init(connection: PostgreSQLConnection) { self.connection = connection }

    func credential(userID: Int64) throws -> StoredTOTP? {
        try connection.lookupOne("SELECT sealed_secret, last_used_step FROM totp_credentials WHERE user_id = $1", [.integer(userID)])
            .map { StoredTOTP(sealedSecret: $0.bytes(0), lastUsedStep: $0.int(1)) }
    }

    func enrol(userID: Int64, sealedSecret: [UInt8], at now: Int64) throws {
        try connection.execute("""
            INSERT INTO totp_credentials (user_id, sealed_secret, last_used_step, created_at) VALUES ($1, $2, -1, $3)
            ON CONFLICT (user_id) DO UPDATE SET sealed_secret = excluded.sealed_secret, last_used_step = -1, created_at = excluded.created_at
            """, [.integer(userID), .bytes(sealedSecret), .integer(now)])
    }

    func accept(step: Int64, userID: Int64) throws -> Bool {
        try connection.execute("UPDATE totp_credentials SET last_used_step = $1 WHERE user_id = $2 AND last_used_step < $1",
                               [.integer(step), .integer(userID)]) == 1
    }

    func remove(userID: Int64) throws -> Bool {
        try connection.execute("DELETE FROM totp_recovery_codes WHERE user_id = $1", [.integer(userID)])
        return try connection.execute("DELETE FROM totp_credentials WHERE user_id = $1", [.integer(userID)]) == 1
    }

    func recoveryCodesLeft(userID: Int64) throws -> Int {
        Int(try connection.lookupOne("SELECT count(*) FROM totp_recovery_codes WHERE user_id = $1", [.integer(userID)])?.int(0) ?? 0)
    }

    func replaceRecoveryCodes(userID: Int64, hashes: [[UInt8]], at now: Int64) throws {
        try connection.execute("DELETE FROM totp_recovery_codes WHERE user_id = $1", [.integer(userID)])
        for hash in hashes {
            try connection.execute("INSERT INTO totp_recovery_codes (user_id, code_hash, created_at) VALUES ($1, $2, $3)",
                                   [.integer(userID), .bytes(hash), .integer(now)])
        }
    }

    func useRecoveryCode(userID: Int64, hash: [UInt8]) throws -> Bool {
        try connection.execute("DELETE FROM totp_recovery_codes WHERE user_id = $1 AND code_hash = $2", [.integer(userID), .bytes(hash)]) == 1
    }
}

/// `clients` and `client_redirect_uris`; a change is announced
/// (IssuerChanges), which the responders' client caches watch.
final class PostgreSQLClientStore: ClientStore {
    let connection: PostgreSQLConnection
    init(connection: PostgreSQLConnection) { self.connection = connection }

    static let columns = """
        client_id, secret_hash, scopes, native_sso_group, grant_types, require_dpop, require_par, access_token_lifetime,
        refresh_token_lifetime, ios_app_id, android_package, android_cert_fingerprints, display_name, registration_id,
        backchannel_logout_uri, token_endpoint_auth_method, jwks, jwks_uri, require_signed_request_object, profile,
        id_token_signed_response_alg, registration_access_token_hash
        """

    func find(clientID: String) throws -> Client? {
        guard let row = try connection.lookupOne("SELECT \(Self.columns) FROM clients WHERE client_id = $1", [.text(clientID)]) else { return nil }
        let uris = try connection.lookup("SELECT kind, uri FROM client_redirect_uris WHERE client_id = $1 ORDER BY uri COLLATE \"C\"",
                                        [.text(clientID)])
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
        try connection.lookup("SELECT client_id FROM clients ORDER BY client_id COLLATE \"C\"").compactMap { try find(clientID: $0.string(0)) }
    }

    func insert(_ client: Client, at now: Int64) throws {
        try connection.execute("""
            INSERT INTO clients (client_id, created_at, scopes, grant_types, registration_id) VALUES ($1, $2, '', '', $3)
            """, [.text(client.clientID), .integer(now), .text(client.registrationID)])
        _ = try update(client)
    }

    func update(_ client: Client) throws -> Bool {
        let changed = try connection.execute("""
            UPDATE clients SET secret_hash = $1, scopes = $2, native_sso_group = $3, grant_types = $4, require_dpop = $5, require_par = $6,
                access_token_lifetime = $7, refresh_token_lifetime = $8, ios_app_id = $9, android_package = $10,
                android_cert_fingerprints = $11, display_name = $12, backchannel_logout_uri = $13, token_endpoint_auth_method = $14,
                jwks = $15, jwks_uri = $16, require_signed_request_object = $17, profile = $18,
                id_token_signed_response_alg = $19, registration_access_token_hash = $20
            WHERE client_id = $21
            """, [PostgreSQLValue(client.secretHash), .text(StoredList.encode(client.scopes)), PostgreSQLValue(client.nativeSSOGroup),
                  .text(StoredList.encode(client.grantTypes)), PostgreSQLValue(client.requireDPoP), PostgreSQLValue(client.requirePAR),
                  Self.optional(client.accessTokenLifetime), Self.optional(client.refreshTokenLifetime), PostgreSQLValue(client.iosAppID),
                  PostgreSQLValue(client.androidPackage), .text(StoredList.encode(client.androidCertificateFingerprints)),
                  PostgreSQLValue(client.displayName), PostgreSQLValue(client.backchannelLogoutURI), PostgreSQLValue(client.authMethod),
                  PostgreSQLValue(client.jwks), PostgreSQLValue(client.jwksURI), PostgreSQLValue(client.requireSignedRequestObject),
                  PostgreSQLValue(client.profile), PostgreSQLValue(client.idTokenAlgorithm),
                  client.registrationAccessTokenHash.map { .bytes($0) } ?? .null, .text(client.clientID)])
        guard changed == 1 else { return false }
        try connection.execute("DELETE FROM client_redirect_uris WHERE client_id = $1", [.text(client.clientID)])
        for (kind, uris) in [("login", client.redirectURIs), ("post_logout", client.postLogoutRedirectURIs)] {
            for uri in Set(uris) {
                try connection.execute("INSERT INTO client_redirect_uris (client_id, kind, uri) VALUES ($1, $2, $3)",
                                       [.text(client.clientID), .text(kind), .text(uri)])
            }
        }
        try IssuerChanges.announce(connection)
        return true
    }

    /// At READ COMMITTED a rotation or code exchange committing while this
    /// runs could leave a row the DELETE's snapshot did not see, alive for a
    /// client registered again under the same id. The lock (rare: an
    /// administrator's command) waits for in-flight writers of the token
    /// tables and holds new ones until this commits, so every DELETE below
    /// sees all there is.
    func delete(clientID: String) throws -> Bool {
        try connection.executeScript("LOCK TABLE refresh_tokens, authorization_codes, device_secrets IN SHARE ROW EXCLUSIVE MODE")
        for table in ["refresh_tokens", "authorization_codes", "device_secrets", "pending_authorizations", "pushed_authorizations"] {
            try connection.execute("DELETE FROM \(table) WHERE client_id = $1", [.text(clientID)])
        }
        guard try connection.execute("DELETE FROM clients WHERE client_id = $1", [.text(clientID)]) == 1 else { return false }
        try IssuerChanges.announce(connection)
        return true
    }

    static func optional(_ value: Int?) -> PostgreSQLValue { value.map { .integer(Int64($0)) } ?? .null }
}

/// `apis` and `api_scopes`; a change is announced (IssuerChanges), which
/// the responders' API registry caches watch.
final class PostgreSQLAPIStore: APIStore {
    let connection: PostgreSQLConnection
    init(connection: PostgreSQLConnection) { self.connection = connection }

    func list() throws -> [RegisteredAPI] {
        let scopes = try connection.lookup("SELECT audience, scope FROM api_scopes ORDER BY scope COLLATE \"C\"")
        return try connection.lookup("SELECT audience, name FROM apis ORDER BY audience COLLATE \"C\"").map { row in
            let audience = row.string(0)
            return RegisteredAPI(audience: audience, name: row.string(1),
                                 scopes: scopes.filter { $0.string(0).utf8.elementsEqual(audience.utf8) }.map { $0.string(1) })
        }
    }

    func insert(_ api: RegisteredAPI, at now: Int64) throws {
        try connection.execute("INSERT INTO apis (audience, name, created_at) VALUES ($1, $2, $3)",
                               [.text(api.audience), .text(api.name), .integer(now)])
        for scope in api.scopes {
            try connection.execute("INSERT INTO api_scopes (scope, audience) VALUES ($1, $2)", [.text(scope), .text(api.audience)])
        }
        try IssuerChanges.announce(connection)
    }

    func remove(audience: String) throws -> Bool {
        try connection.execute("DELETE FROM api_scopes WHERE audience = $1", [.text(audience)])
        guard try connection.execute("DELETE FROM apis WHERE audience = $1", [.text(audience)]) == 1 else { return false }
        try IssuerChanges.announce(connection)
        return true
    }
}

/// `native_sso_groups`; a change is announced (IssuerChanges).
final class PostgreSQLNativeSSOGroupStore: NativeSSOGroupStore {
    let connection: PostgreSQLConnection
    init(connection: PostgreSQLConnection) { self.connection = connection }

    func allowsDeviceID(group: String) throws -> Bool {
        try connection.lookupOne("SELECT allow_device_id FROM native_sso_groups WHERE name = $1", [.text(group)])?.int(0) == 1
    }

    func members(group: String) throws -> [String] {
        try connection.lookup("SELECT client_id FROM clients WHERE native_sso_group = $1 ORDER BY client_id COLLATE \"C\"", [.text(group)])
            .map { $0.string(0) }
    }

    func setAllowsDeviceID(_ allowed: Bool, group: String) throws {
        try connection.execute("""
            INSERT INTO native_sso_groups (name, allow_device_id) VALUES ($1, $2)
            ON CONFLICT (name) DO UPDATE SET allow_device_id = excluded.allow_device_id
            """, [.text(group), PostgreSQLValue(allowed)])
        try IssuerChanges.announce(connection)
    }
}

/// `signing_keys`, private keys sealed in `private_sealed`; a change is
/// announced (IssuerChanges), which the responders' key caches watch.
final class PostgreSQLSigningKeyStore: SigningKeyStore {
    let connection: PostgreSQLConnection
    let sealing: SigningKeySealing

    init(connection: PostgreSQLConnection, sealing: SigningKeySealing) {
        self.connection = connection
        self.sealing = sealing
    }

    func all() throws -> [StoredSigningKey] {
        try connection.lookup("SELECT kid, public_pem, created_at, activates_at, retired_at, alg FROM signing_keys ORDER BY activates_at DESC, seq DESC")
            .map { StoredSigningKey(kid: $0.string(0), publicPEM: $0.string(1), createdAt: $0.int(2), activatesAt: $0.int(3),
                                    retiredAt: $0.optionalInt(4), algorithm: $0.string(5)) }
    }

    func privateKeyPEM(kid: String) throws -> [UInt8]? {
        guard let sealed = try connection.lookupOne("SELECT private_sealed FROM signing_keys WHERE kid = $1 AND retired_at IS NULL",
                                                   [.text(kid)])?.optionalBytes(0) else { return nil }
        return try sealing.open(sealed, kid: kid)
    }

    func insert(_ key: StoredSigningKey, privateKeyPEM: [UInt8]) throws {
        try connection.execute("""
            INSERT INTO signing_keys (kid, public_pem, private_sealed, created_at, activates_at, alg) VALUES ($1, $2, $3, $4, $5, $6)
            """, [.text(key.kid), .text(key.publicPEM), .bytes(try sealing.seal(privateKeyPEM, kid: key.kid)), .integer(key.createdAt),
                  .integer(key.activatesAt), .text(key.algorithm)])
        try IssuerChanges.announce(connection)
    }

    func retire(kid: String, at now: Int64) throws {
        try connection.execute("UPDATE signing_keys SET retired_at = $1, private_sealed = NULL WHERE kid = $2", [.integer(now), .text(kid)])
        try IssuerChanges.announce(connection)
    }
}
