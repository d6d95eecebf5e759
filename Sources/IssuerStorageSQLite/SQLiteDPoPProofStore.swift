import IssuerStorage
import SQLiteClient

/// `dpop_proofs`: one row per proof jti, by hash; an expired row may be
/// taken over by the same hash (it could not be accepted anyway).
final class SQLiteDPoPProofStore: DPoPProofStore {
    let database: SQLiteDatabase
    init(database: SQLiteDatabase) { self.database = database }

    func remember(jtiHash: [UInt8], expiresAt: Int64, now: Int64) throws -> Bool {
        try database.execute("""
            INSERT INTO dpop_proofs (jti_hash, expires_at) VALUES (?, ?)
            ON CONFLICT (jti_hash) DO UPDATE SET expires_at = excluded.expires_at WHERE dpop_proofs.expires_at <= ?
            """, [.blob(jtiHash), .integer(expiresAt), .integer(now)]) == 1
    }
}
