import IssuerStorage
import PostgreSQLClient

/// `identity_providers`, one row per provider; names ordered as bytes
/// (COLLATE "C"), as SQLite orders them.
final class PostgreSQLIdentityProviderStore: IdentityProviderStore {
    let connection: PostgreSQLConnection
    init(connection: PostgreSQLConnection) { self.connection = connection }

    static let columns = """
        name, issuer, client_id, secret_sealed, scopes, label, preset, authorization_endpoint, token_endpoint, jwks_uri, \
        apple_team_id, apple_key_id, apple_key_sealed, hosted_domain, created_at, sends_iss
        """

    func list() throws -> [IdentityProvider] {
        try connection.lookup("SELECT \(Self.columns) FROM identity_providers ORDER BY name COLLATE \"C\"").map(Self.provider)
    }

    func find(name: String) throws -> IdentityProvider? {
        try connection.lookupOne("SELECT \(Self.columns) FROM identity_providers WHERE name = $1", [.text(name)]).map(Self.provider)
    }

    func insert(_ provider: IdentityProvider) throws {
        try connection.execute("""
            INSERT INTO identity_providers (\(Self.columns)) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)
            """, [.text(provider.name), .text(provider.issuer), .text(provider.clientID), PostgreSQLValue(provider.sealedSecret),
                  .text(StoredList.encode(provider.scopes)), .text(provider.label), .text(provider.preset.rawValue),
                  .text(provider.endpoints.authorization), .text(provider.endpoints.token), .text(provider.endpoints.jwks),
                  PostgreSQLValue(provider.appleKey?.teamID), PostgreSQLValue(provider.appleKey?.keyID),
                  PostgreSQLValue(provider.appleKey?.sealedPrivateKey), PostgreSQLValue(provider.hostedDomain), .integer(provider.createdAt),
                  .integer(provider.endpoints.sendsIssuer ? 1 : 0)])
    }

    func remove(name: String) throws -> Bool {
        try connection.execute("DELETE FROM identity_providers WHERE name = $1", [.text(name)]) == 1
    }

    static func provider(_ row: PostgreSQLRow) -> IdentityProvider {
        let appleKey = row.optionalString(10).flatMap { team in
            row.optionalString(11).map { AppleSigningKey(teamID: team, keyID: $0, sealedPrivateKey: row.bytes(12)) }
        }
        return IdentityProvider(name: row.string(0), issuer: row.string(1), clientID: row.string(2), sealedSecret: row.optionalBytes(3),
                                scopes: StoredList.decode(row.string(4)), label: row.string(5),
                                preset: IdentityProviderPreset(rawValue: row.string(6)),
                                endpoints: ProviderEndpoints(authorization: row.string(7), token: row.string(8), jwks: row.string(9),
                                                             sendsIssuer: row.int(15) != 0),
                                appleKey: appleKey, hostedDomain: row.optionalString(13), createdAt: row.int(14))
    }
}
