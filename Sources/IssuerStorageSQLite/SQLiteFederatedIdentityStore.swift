import IssuerStorage
import SQLiteClient

/// `federated_identities` and `federation_requests`; issuers, subjects and
/// hashes compare as bytes (SQLite's BINARY collation).
final class SQLiteFederatedIdentityStore: FederatedIdentityStore {
    let database: SQLiteDatabase
    init(database: SQLiteDatabase) { self.database = database }

    static let columns = "issuer, subject, user_id, provider, email, linked_at, last_used_at"

    func find(issuer: String, subject: String) throws -> FederatedIdentity? {
        try database.queryOne("SELECT \(Self.columns) FROM federated_identities WHERE issuer = ? AND subject = ?",
                              [.text(issuer), .text(subject)]).map(Self.identity)
    }

    func list(userID: Int64) throws -> [FederatedIdentity] {
        try database.query("SELECT \(Self.columns) FROM federated_identities WHERE user_id = ? ORDER BY linked_at, provider",
                           [.integer(userID)]).map(Self.identity)
    }

    func insert(_ identity: FederatedIdentity) throws {
        try database.execute("INSERT INTO federated_identities (\(Self.columns)) VALUES (?, ?, ?, ?, ?, ?, ?)",
                             [.text(identity.issuer), .text(identity.subject), .integer(identity.userID), .text(identity.provider),
                              .text(identity.email), .integer(identity.linkedAt), identity.lastUsedAt.map(SQLiteValue.integer) ?? .null])
    }

    func touch(issuer: String, subject: String, at now: Int64) throws {
        try database.execute("UPDATE federated_identities SET last_used_at = ? WHERE issuer = ? AND subject = ?",
                             [.integer(now), .text(issuer), .text(subject)])
    }

    func remove(userID: Int64, issuer: String, subject: String) throws -> Bool {
        try database.execute("DELETE FROM federated_identities WHERE user_id = ? AND issuer = ? AND subject = ?",
                             [.integer(userID), .text(issuer), .text(subject)]) == 1
    }

    func insertRequest(_ request: FederationRequest) throws {
        try database.execute("""
            INSERT INTO federation_requests (state_hash, binding_hash, provider, pending_hash, created_at, expires_at)
            VALUES (?, ?, ?, ?, ?, ?)
            """, [.blob(request.stateHash), .blob(request.bindingHash), .text(request.provider), .blob(request.pendingHash),
                  .integer(request.createdAt), .integer(request.expiresAt)])
    }

    /// Write units hold SQLite's write lock, so a second taker's UPDATE runs
    /// after the first committed and matches nothing.
    func takeRequest(stateHash: [UInt8], now: Int64) throws -> FederationRequest? {
        try database.queryOne("""
            UPDATE federation_requests SET used_at = ? WHERE state_hash = ? AND used_at IS NULL AND expires_at > ?
            RETURNING state_hash, binding_hash, provider, pending_hash, created_at, expires_at
            """, [.integer(now), .blob(stateHash), .integer(now)]).map {
            FederationRequest(stateHash: $0.bytes(0), bindingHash: $0.bytes(1), provider: $0.string(2), pendingHash: $0.bytes(3),
                              createdAt: $0.int(4), expiresAt: $0.int(5))
        }
    }

    func offerLink(stateHash: [UInt8], _ offer: FederatedLinkOffer) throws {
        try database.execute("""
            UPDATE federation_requests SET link_user_id = ?, link_issuer = ?, link_subject = ?, link_email = ? WHERE state_hash = ?
            """, [.integer(offer.userID), .text(offer.issuer), .text(offer.subject), .text(offer.email), .blob(stateHash)])
    }

    func takeLinkOffer(pendingHash: [UInt8], userID: Int64, now: Int64) throws -> FederatedLinkOffer? {
        let offers = try database.query("""
            DELETE FROM federation_requests WHERE pending_hash = ? AND link_user_id = ? AND expires_at > ?
            RETURNING created_at, link_user_id, provider, link_issuer, link_subject, link_email
            """, [.blob(pendingHash), .integer(userID), .integer(now)])
        return offers.max { $0.int(0) < $1.int(0) }.map {
            FederatedLinkOffer(userID: $0.int(1), provider: $0.string(2), issuer: $0.string(3), subject: $0.string(4), email: $0.string(5))
        }
    }

    static func identity(_ row: SQLiteRow) -> FederatedIdentity {
        FederatedIdentity(issuer: row.string(0), subject: row.string(1), userID: row.int(2), provider: row.string(3), email: row.string(4),
                          linkedAt: row.int(5), lastUsedAt: row.optionalInt(6))
    }
}
