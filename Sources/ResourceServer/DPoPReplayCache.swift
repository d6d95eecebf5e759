import SQLiteClient
import SSOCore

/// The DPoP proofs a resource server has already accepted (RFC 9449 §11.1),
/// each remembered by a hash for as long as it could still be accepted.
public protocol DPoPReplayCache: AnyObject {
    /// Records `proofHash` as used until `expiresAt`. Of callers presenting
    /// the same hash before it expires, in whichever process sharing the
    /// cache, exactly one gets `true`; every other gets `false`.
    func claim(_ proofHash: [UInt8], expiresAt: Int64, now: Int64) throws -> Bool
}

/// The replay cache of one API host: a table in an SQLite file of its own
/// that every responder process of api-a and api-b on the host opens, so a
/// proof accepted by one process is refused by all the others.
///
/// Its own file, not the APIs' data file: a commit there would change that
/// file's `PRAGMA data_version` on every DPoP request, and with it throw
/// away every process's `EncodedBodyCache`, slowing down bearer requests too.
public final class SQLiteDPoPReplayCache: DPoPReplayCache {
    static let migrations = [
        Migration(version: 1, sql: """
            CREATE TABLE dpop_proof_jtis (
                proof_hash BLOB PRIMARY KEY,
                expires_at INTEGER NOT NULL
            ) WITHOUT ROWID;
            CREATE INDEX dpop_proof_jtis_by_expiry ON dpop_proof_jtis (expires_at);
            """),
    ]

    /// Every this many claims a process deletes up to `sweepBatch` expired
    /// rows: more than it adds in between, so the table stays about as
    /// large as the proofs of one replay window, with no sweeper process.
    static let sweepInterval = 64
    static let sweepBatch = 1000

    private let database: SQLiteDatabase
    private var claimsUntilSweep = 0

    /// `syncsCheckpoints: false` (what `DPoPReplayCacheBoot.prepare` allows)
    /// leaves flushing the file to the kernel: a claim is then a write into
    /// the page cache, and a checkpoint no longer stalls the request that
    /// triggers it on two flushes to disk.
    public init(database: SQLiteDatabase, syncsCheckpoints: Bool = true) throws {
        self.database = database
        try Migrator.migrate(database, component: "dpop-replay", migrations: Self.migrations)
        if !syncsCheckpoints { try database.execute("PRAGMA synchronous = OFF") }
    }

    /// One statement decides the winner: the insert of a new hash, or the
    /// reuse of an expired row not swept yet; a live row makes it a no-op
    /// that returns nothing. SQLite's write lock serialises the processes.
    public func claim(_ proofHash: [UInt8], expiresAt: Int64, now: Int64) throws -> Bool {
        if claimsUntilSweep == 0 {
            try sweep(now: now)
            claimsUntilSweep = Self.sweepInterval
        }
        claimsUntilSweep -= 1
        let rows = try database.query("""
            INSERT INTO dpop_proof_jtis (proof_hash, expires_at) VALUES (?, ?)
            ON CONFLICT (proof_hash) DO UPDATE SET expires_at = excluded.expires_at WHERE dpop_proof_jtis.expires_at <= ?
            RETURNING expires_at
            """, [.blob(proofHash), .integer(expiresAt), .integer(now)])
        return !rows.isEmpty
    }

    /// Deletes up to `sweepBatch` expired rows; returns how many.
    @discardableResult
    func sweep(now: Int64) throws -> Int {
        try database.execute("""
            DELETE FROM dpop_proof_jtis WHERE proof_hash IN
                (SELECT proof_hash FROM dpop_proof_jtis WHERE expires_at <= ? LIMIT ?)
            """, [.integer(now), .integer(Int64(Self.sweepBatch))])
    }

    /// The connection's `PRAGMA synchronous` (0 OFF, 1 NORMAL), for tests.
    var synchronousMode: Int64 {
        get throws { try database.queryOne("PRAGMA synchronous")?.int(0) ?? -1 }
    }

    func count() throws -> Int64 {
        try database.queryOne("SELECT count(*) FROM dpop_proof_jtis")?.int(0) ?? 0
    }
}
