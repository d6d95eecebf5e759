import IssuerStorage
import PostgreSQLClient

/// `dpop_proofs`: the primary key decides between concurrent inserts on
/// any node; an expired row may be taken over by the same hash.
final class PostgreSQLDPoPProofStore: DPoPProofStore {
    let connection: PostgreSQLConnection
    init(connection: PostgreSQLConnection) { self.connection = connection }

    func remember(jtiHash: [UInt8], expiresAt: Int64, now: Int64) throws -> Bool {
        try connection.execute("""
            INSERT INTO dpop_proofs (jti_hash, expires_at) VALUES ($1, $2)
            ON CONFLICT (jti_hash) DO UPDATE SET expires_at = excluded.expires_at WHERE dpop_proofs.expires_at <= $3
            """, [.bytes(jtiHash), .integer(expiresAt), .integer(now)]) == 1
    }
}
