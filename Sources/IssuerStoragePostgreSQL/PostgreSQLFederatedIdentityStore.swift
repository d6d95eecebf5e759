import IssuerStorage
import PostgreSQLClient

/// `federated_identities` and `federation_requests`. Under READ COMMITTED
/// the taking UPDATE's row lock picks one winner: a second taker waits,
/// then finds `used_at` set and matches nothing.
final class PostgreSQLFederatedIdentityStore: FederatedIdentityStore {
    let connection: PostgreSQLConnection
    init(connection: PostgreSQLConnection) { self.connection = connection }

    static let columns = "issuer, subject, user_id, provider, email, linked_at, last_used_at"

    func find(issuer: String, subject: String) throws -> FederatedIdentity? {
        try connection.lookupOne("SELECT \(Self.columns) FROM federated_identities WHERE issuer = $1 AND subject = $2",
                                 [.text(issuer), .text(subject)]).map(Self.identity)
    }

    func list(userID: Int64) throws -> [FederatedIdentity] {
        try connection.lookup("""
            SELECT \(Self.columns) FROM federated_identities WHERE user_id = $1 ORDER BY linked_at, provider COLLATE "C"
            """, [.integer(userID)]).map(Self.identity)
    }

    func insert(_ identity: FederatedIdentity) throws {
        try connection.execute("INSERT INTO federated_identities (\(Self.columns)) VALUES ($1, $2, $3, $4, $5, $6, $7)",
                               [.text(identity.issuer), .text(identity.subject), .integer(identity.userID), .text(identity.provider),
                                .text(identity.email), .integer(identity.linkedAt), PostgreSQLValue(identity.lastUsedAt)])
    }

    func touch(issuer: String, subject: String, at now: Int64) throws {
        guard ![issuer, subject].contains(where: { $0.utf8.contains(0) }) else { return }
        try connection.execute("UPDATE federated_identities SET last_used_at = $1 WHERE issuer = $2 AND subject = $3",
                               [.integer(now), .text(issuer), .text(subject)])
    }

    func remove(userID: Int64, issuer: String, subject: String) throws -> Bool {
        guard ![issuer, subject].contains(where: { $0.utf8.contains(0) }) else { return false }
        return try connection.execute("DELETE FROM federated_identities WHERE user_id = $1 AND issuer = $2 AND subject = $3",
                                      [.integer(userID), .text(issuer), .text(subject)]) == 1
    }

    func insertRequest(_ request: FederationRequest) throws {
        try connection.execute("""
            INSERT INTO federation_requests (state_hash, binding_hash, provider, pending_hash, created_at, expires_at)
            VALUES ($1, $2, $3, $4, $5, $6)
            """, [.bytes(request.stateHash), .bytes(request.bindingHash), .text(request.provider), .bytes(request.pendingHash),
                  .integer(request.createdAt), .integer(request.expiresAt)])
    }

    func takeRequest(stateHash: [UInt8], now: Int64) throws -> FederationRequest? {
        try connection.lookupOne("""
            UPDATE federation_requests SET used_at = $1 WHERE state_hash = $2 AND used_at IS NULL AND expires_at > $1
            RETURNING state_hash, binding_hash, provider, pending_hash, created_at, expires_at
            """, [.integer(now), .bytes(stateHash)]).map {
            FederationRequest(stateHash: $0.bytes(0), bindingHash: $0.bytes(1), provider: $0.string(2), pendingHash: $0.bytes(3),
                              createdAt: $0.int(4), expiresAt: $0.int(5))
        }
    }

    func offerLink(stateHash: [UInt8], _ offer: FederatedLinkOffer) throws {
        try connection.execute("""
            UPDATE federation_requests SET link_user_id = $1, link_issuer = $2, link_subject = $3, link_email = $4 WHERE state_hash = $5
            """, [.integer(offer.userID), .text(offer.issuer), .text(offer.subject), .text(offer.email), .bytes(stateHash)])
    }

    func takeLinkOffer(pendingHash: [UInt8], userID: Int64, now: Int64) throws -> FederatedLinkOffer? {
        let offers = try connection.lookup("""
            DELETE FROM federation_requests WHERE pending_hash = $1 AND link_user_id = $2 AND expires_at > $3
            RETURNING created_at, link_user_id, provider, link_issuer, link_subject, link_email
            """, [.bytes(pendingHash), .integer(userID), .integer(now)])
        return offers.max { $0.int(0) < $1.int(0) }.map {
            FederatedLinkOffer(userID: $0.int(1), provider: $0.string(2), issuer: $0.string(3), subject: $0.string(4), email: $0.string(5))
        }
    }

    static func identity(_ row: PostgreSQLRow) -> FederatedIdentity {
        FederatedIdentity(issuer: row.string(0), subject: row.string(1), userID: row.int(2), provider: row.string(3), email: row.string(4),
                          linkedAt: row.int(5), lastUsedAt: row.optionalInt(6))
    }
}
