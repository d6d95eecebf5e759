import FoundationEssentials
import Glibc
import SSOCore

/// One signing key's metadata as the database holds it.
public struct SigningKeyRecord: Equatable, Sendable {
    /// Derived from the times, never stored: a key moves through them as the
    /// clock runs, with no command needed.
    public enum State: String, Sendable {
        /// Published, signs from `activatesAt` (pre-publication).
        case next
        /// Signs new tokens.
        case active
        /// Superseded, still published while tokens it signed may be alive.
        case published
        /// Superseded long enough ago that every token it signed has expired.
        case expired
        /// Withdrawn by `ssoctl keys retire`; its private key is deleted.
        case retired
    }
    public let kid: String
    public let state: State
    public let publicPEM: String
    public let createdAt: Int64
    public let activatesAt: Int64
    public let retiredAt: Int64?
}

public struct KeyStoreError: Error, CustomStringConvertible {
    public let description: String
}

/// Signing keys: metadata (kid, dates, public PEM) in SQLite, private keys in
/// `$GATEHOUSE_HOME/keys/<kid>.pem` with mode 0600.
///
/// Rotation publishes a key before it signs: `rotate(activationDelay:)`
/// adds it to the JWKS at once and it becomes the signing key when
/// `activates_at` arrives, so every verifier has had the chance to fetch it
/// first. The key it replaces stays published until every token it signed
/// has expired (`tokenLifetime` after it was superseded).
public final class SigningKeyStore {
    let database: SQLiteDatabase
    let keysDirectory: String
    let clock: Clock
    /// How long a superseded key must stay published: the longest lifetime
    /// of a token it may have signed, plus clock leeway.
    let tokenLifetime: Int64

    public init(database: SQLiteDatabase, keysDirectory: String, clock: @escaping Clock = systemClock, tokenLifetime: Int = 3660) {
        self.database = database
        self.keysDirectory = keysDirectory
        self.clock = clock
        self.tokenLifetime = Int64(tokenLifetime)
    }

    /// The store as a deployment configures it.
    public convenience init(config: GatehouseConfig, database: SQLiteDatabase, clock: @escaping Clock = systemClock) {
        self.init(database: database, keysDirectory: config.keysDirectory, clock: clock, tokenLifetime: config.signingKeyRetention)
    }

    static let columns = "kid, public_pem, created_at, activates_at, retired_at"

    /// Every key, newest activation first (insertion order breaks ties:
    /// two rotations in one second), with its state now.
    public func all() throws -> [SigningKeyRecord] {
        let rows = try database.query("SELECT \(Self.columns) FROM signing_keys ORDER BY activates_at DESC, rowid DESC")
        return records(rows, now: clock())
    }

    /// The keys the JWKS publishes: the active one first, then the next and
    /// the superseded ones whose tokens may still be alive.
    public func publishedKeys() throws -> [SigningKeyRecord] {
        let order: [SigningKeyRecord.State: Int] = [.active: 0, .next: 1, .published: 2]
        return try all().filter { order[$0.state] != nil }.sorted { order[$0.state]! < order[$1.state]! }
    }

    public func activeKID() throws -> String? {
        try database.queryOne("""
            SELECT kid FROM signing_keys WHERE retired_at IS NULL AND activates_at <= ?
            ORDER BY activates_at DESC, rowid DESC LIMIT 1
            """, [.integer(clock())])?.string(0)
    }

    /// When the signing key will next change by itself (a pending key's
    /// activation), so caches know when to look again.
    public func nextActivation() throws -> Int64? {
        try database.queryOne("SELECT min(activates_at) FROM signing_keys WHERE retired_at IS NULL AND activates_at > ?",
                              [.integer(clock())])?.optionalInt(0)
    }

    /// Loads the active private key from its file.
    public func activeSigningKey() throws -> (kid: String, key: RSAKey) {
        guard let kid = try activeKID() else { throw KeyStoreError(description: "no active signing key; run ssoctl keys rotate") }
        let pem = try Data(contentsOf: URL(fileURLWithPath: privateKeyPath(kid)))
        return (kid, try RSAKey.privateKey(pem: Array(pem)))
    }

    /// Adds a new key, published at once, signing after `activationDelay`
    /// seconds (0: at once, for a first key or an emergency rotation).
    @discardableResult
    public func rotate(activationDelay: Int = 0) throws -> String {
        let key = try RSAKey.generate(bits: 2048)
        let kid = try JWK.thumbprint(of: key)
        try writePrivateKey(key, kid: kid)
        let publicPEM = String(decoding: try key.publicKeyPEM(), as: UTF8.self)
        let now = clock()
        do {
            try database.execute("INSERT INTO signing_keys (kid, public_pem, created_at, activates_at) VALUES (?, ?, ?, ?)",
                                 [.text(kid), .text(publicPEM), .integer(now), .integer(now + Int64(max(0, activationDelay)))])
        } catch {
            try? FileManager.default.removeItem(atPath: privateKeyPath(kid))
            throw error
        }
        return kid
    }

    /// Withdraws a key: out of the JWKS, private key deleted, so tokens it
    /// signed stop verifying once verifiers refresh. The active key cannot be
    /// retired while no other key can take over: rotate first.
    public func retire(kid: String) throws {
        guard let record = try all().first(where: { $0.kid == kid }) else { throw KeyStoreError(description: "no key with kid \(kid)") }
        switch record.state {
        case .active: throw KeyStoreError(description: "\(kid) is the active key; rotate first, then retire it")
        case .retired: throw KeyStoreError(description: "\(kid) is already retired")
        default: break
        }
        try database.execute("UPDATE signing_keys SET retired_at = ? WHERE kid = ?", [.integer(clock()), .text(kid)])
        try? FileManager.default.removeItem(atPath: privateKeyPath(kid))
    }

    func privateKeyPath(_ kid: String) -> String { keysDirectory + "/" + kid + ".pem" }

    /// Writes the PEM to a temporary file created 0600, then renames it into
    /// place, so the key is never readable by others, not even for a moment.
    private func writePrivateKey(_ key: RSAKey, kid: String) throws {
        try FileManager.default.createDirectory(atPath: keysDirectory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        let pem = try key.privateKeyPEM()
        let temporary = privateKeyPath(kid) + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_EXCL, 0o600)
        guard fd >= 0 else { throw KeyStoreError(description: "cannot create \(temporary): errno \(errno)") }
        let written = pem.withUnsafeBytes { write(fd, $0.baseAddress, pem.count) }
        let synced = fsync(fd)
        close(fd)
        guard written == pem.count, synced == 0, rename(temporary, privateKeyPath(kid)) == 0 else {
            unlink(temporary)
            throw KeyStoreError(description: "cannot write \(privateKeyPath(kid))")
        }
    }

    /// States from times: rows come newest activation first, so the first
    /// activated, unretired row is the active key and each later one was
    /// superseded when the key before it in the list activated.
    func records(_ rows: [SQLiteRow], now: Int64) -> [SigningKeyRecord] {
        var supersededAt: Int64?
        return rows.map { row in
            let activatesAt = row.int(3), retiredAt = row.optionalInt(4)
            let state: SigningKeyRecord.State
            if retiredAt != nil {
                state = .retired
            } else if activatesAt > now {
                state = .next
            } else if let superseded = supersededAt {
                state = now - superseded > tokenLifetime ? .expired : .published
            } else {
                state = .active
            }
            if retiredAt == nil, activatesAt <= now { supersededAt = activatesAt }
            return SigningKeyRecord(kid: row.string(0), state: state, publicPEM: row.string(1), createdAt: row.int(2),
                                    activatesAt: activatesAt, retiredAt: retiredAt)
        }
    }
}
