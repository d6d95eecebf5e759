import IssuerStorage
import SQLiteClient

/// `identity_providers`, one row per provider; names compare as bytes
/// (SQLite's BINARY collation).
final class SQLiteIdentityProviderStore: IdentityProviderStore {
    let database: SQLiteDatabase
    init(database: SQLiteDatabase) { self.database = database }

    static let columns = """
        name, issuer, client_id, secret_sealed, scopes, label, preset, authorization_endpoint, token_endpoint, jwks_uri, \
        apple_team_id, apple_key_id, apple_key_sealed, hosted_domain, created_at, sends_iss
        """

    func list() throws -> [IdentityProvider] {
        try database.query("SELECT \(Self.columns) FROM identity_providers ORDER BY name").map(Self.provider)
    }

    func find(name: String) throws -> IdentityProvider? {
        try database.queryOne("SELECT \(Self.columns) FROM identity_providers WHERE name = ?", [.text(name)]).map(Self.provider)
    }

    func insert(_ provider: IdentityProvider) throws {
        try database.execute("""
            INSERT INTO identity_providers (\(Self.columns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, [.text(provider.name), .text(provider.issuer), .text(provider.clientID), provider.sealedSecret.map(SQLiteValue.blob) ?? .null,
                  .text(StoredList.encode(provider.scopes)), .text(provider.label), .text(provider.preset.rawValue),
                  .text(provider.endpoints.authorization), .text(provider.endpoints.token), .text(provider.endpoints.jwks),
                  SQLiteValue(provider.appleKey?.teamID), SQLiteValue(provider.appleKey?.keyID),
                  provider.appleKey.map { SQLiteValue.blob($0.sealedPrivateKey) } ?? .null, SQLiteValue(provider.hostedDomain),
                  .integer(provider.createdAt), .integer(provider.endpoints.sendsIssuer ? 1 : 0)])
    }

    func remove(name: String) throws -> Bool {
        try database.execute("DELETE FROM identity_providers WHERE name = ?", [.text(name)]) == 1
    }

    static func provider(_ row: SQLiteRow) -> IdentityProvider {
        let appleKey = row.optionalString(10).flatMap { team in
            row.optionalString(11).map { AppleSigningKey(teamID: team, keyID: $0, sealedPrivateKey: row.bytes(12)) }
        }
        return IdentityProvider(name: row.string(0), issuer: row.string(1), clientID: row.string(2), sealedSecret: row[3].bytes,
                                scopes: StoredList.decode(row.string(4)), label: row.string(5),
                                preset: IdentityProviderPreset(rawValue: row.string(6)),
                                endpoints: ProviderEndpoints(authorization: row.string(7), token: row.string(8), jwks: row.string(9), sendsIssuer: row.int(15) != 0),
                                appleKey: appleKey, hostedDomain: row.optionalString(13), createdAt: row.int(14))
    }
}
