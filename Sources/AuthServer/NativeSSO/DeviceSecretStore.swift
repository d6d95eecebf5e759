import SSOCore

/// One device secret as the database knows it (never the secret itself).
public struct DeviceSecretRecord: Equatable, Sendable {
    public let secretHash: [UInt8]
    public let sid: String
    public let userID: Int64
    public let clientID: String
    public let deviceID: String?
    public let expiresAt: Int64
    /// The scope the sign-in that issued this secret granted: the most a
    /// token exchange from it may grant. Nil on rows from before
    /// IssuerMigration6, which did not record it.
    public let scope: [String]?

    /// The `ds_hash` of this secret (NativeSSOHash: the first half of the
    /// stored SHA-256).
    public var dsHash: String { NativeSSOHash.fromDigest(secretHash) }
}

/// Device secrets (Native SSO §3.2): opaque random values, stored hashed,
/// bound to the SSO session they were issued in. "Live" means not revoked
/// and not expired; the session itself is checked by the caller.
public final class DeviceSecretStore {
    let database: SQLiteDatabase
    let clock: Clock

    public init(database: SQLiteDatabase, clock: @escaping Clock = systemClock) {
        self.database = database
        self.clock = clock
    }

    /// Issues a secret bound to `sid` for a sign-in that granted `scope`;
    /// returns it (shown once) and its record.
    public func issue(sid: String, userID: Int64, clientID: String, deviceID: String?, scope: [String], codeHash: [UInt8]?,
                      expiresAt: Int64) throws -> (secret: String, record: DeviceSecretRecord) {
        let secret = SecureRandom.token()
        let hash = SecretHash.of(secret)
        try database.execute("""
            INSERT INTO device_secrets (secret_hash, sid, user_id, client_id, device_id, scope, code_hash, created_at, expires_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, [.blob(hash), .text(sid), .integer(userID), .text(clientID), SQLiteValue(deviceID), .text(scope.joined(separator: " ")),
                  codeHash.map { .blob($0) } ?? .null, .integer(clock()), .integer(expiresAt)])
        return (secret, DeviceSecretRecord(secretHash: hash, sid: sid, userID: userID, clientID: clientID, deviceID: deviceID,
                                           expiresAt: expiresAt, scope: scope))
    }

    /// The live record behind a presented secret; nil for anything else.
    public func live(secret: String) throws -> DeviceSecretRecord? {
        guard !secret.isEmpty, secret.utf8.count <= 256 else { return nil }
        return try database.queryOne("""
            SELECT \(Self.columns) FROM device_secrets
            WHERE secret_hash = ? AND revoked_at IS NULL AND expires_at > ?
            """, [.blob(SecretHash.of(secret)), .integer(clock())]).map(Self.record)
    }

    /// The newest live secret issued to `clientID` in session `sid`.
    public func newestLive(sid: String, clientID: String) throws -> DeviceSecretRecord? {
        try database.queryOne("""
            SELECT \(Self.columns) FROM device_secrets
            WHERE sid = ? AND client_id = ? AND revoked_at IS NULL AND expires_at > ? ORDER BY created_at DESC, rowid DESC LIMIT 1
            """, [.text(sid), .text(clientID), .integer(clock())]).map(Self.record)
    }

    /// The newest live secret issued to `clientID` in session `sid` by a
    /// sign-in that named `deviceID`: what the seed profile stands on, since
    /// the device id itself proves nothing (it is not a secret).
    public func newestLive(sid: String, clientID: String, deviceID: String) throws -> DeviceSecretRecord? {
        try database.queryOne("""
            SELECT \(Self.columns) FROM device_secrets
            WHERE sid = ? AND client_id = ? AND device_id = ? AND revoked_at IS NULL AND expires_at > ?
            ORDER BY created_at DESC, rowid DESC LIMIT 1
            """, [.text(sid), .text(clientID), .text(deviceID), .integer(clock())]).map(Self.record)
    }

    /// Session end (SessionBoundCredentials): every secret of the session.
    public func revokeAll(sid: String) throws {
        try database.execute("UPDATE device_secrets SET revoked_at = ? WHERE sid = ? AND revoked_at IS NULL",
                             [.integer(clock()), .text(sid)])
    }

    /// A replayed authorization code revokes what its first use issued.
    public func revokeAll(issuedByCodeHash codeHash: [UInt8]) throws {
        try database.execute("UPDATE device_secrets SET revoked_at = ? WHERE code_hash = ? AND revoked_at IS NULL",
                             [.integer(clock()), .blob(codeHash)])
    }

    static let columns = "secret_hash, sid, user_id, client_id, device_id, expires_at, scope"

    static func record(_ row: SQLiteRow) -> DeviceSecretRecord {
        DeviceSecretRecord(secretHash: row[0].bytes ?? [], sid: row.string(1), userID: row.int(2), clientID: row.string(3),
                           deviceID: row.optionalString(4), expiresAt: row.int(5),
                           scope: row.optionalString(6).map { $0.split(separator: " ").map(String.init) })
    }
}
