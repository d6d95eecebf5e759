import IssuerStorage
import SSOCore

extension DeviceSecretRecord {
    /// The `ds_hash` of this secret (NativeSSOHash: the first half of the
    /// stored SHA-256).
    public var dsHash: String { NativeSSOHash.fromDigest(secretHash) }
}

/// Device secrets (Native SSO §3.2): opaque random values, stored hashed,
/// bound to the SSO session they were issued in. "Live" means not revoked
/// and not expired; the session itself is checked by the caller.
public final class DeviceSecrets {
    let storage: any IssuerStorage
    let clock: Clock

    public init(storage: any IssuerStorage, clock: @escaping Clock = systemClock) {
        self.storage = storage
        self.clock = clock
    }

    /// Issues a secret bound to `sid` for a sign-in that granted `scope`, in
    /// the caller's write unit; returns it (shown once) and its record.
    public func issue(sid: String, userID: Int64, clientID: String, deviceID: String?, scope: [String], codeHash: [UInt8]?,
                      expiresAt: Int64, _ tx: any IssuerWrites) throws -> (secret: String, record: DeviceSecretRecord) {
        let secret = SecureRandom.token()
        let record = DeviceSecretRecord(secretHash: SecretHash.of(secret), sid: sid, userID: userID, clientID: clientID, deviceID: deviceID,
                                        expiresAt: expiresAt, scope: scope)
        try tx.deviceSecrets.insert(record, codeHash: codeHash, createdAt: clock())
        return (secret, record)
    }

    /// The live record behind a presented secret; nil for anything else.
    public func live(secret: String) throws -> DeviceSecretRecord? {
        guard !secret.isEmpty, secret.utf8.count <= 256 else { return nil }
        return try storage.read.deviceSecrets.live(secretHash: SecretHash.of(secret), now: clock())
    }

    /// The newest live secret issued to `clientID` in session `sid`, or only
    /// among those whose sign-in named `deviceID` (what the seed profile
    /// stands on, since the device id itself proves nothing).
    public func newestLive(sid: String, clientID: String, deviceID: String? = nil) throws -> DeviceSecretRecord? {
        try storage.read.deviceSecrets.newestLive(sid: sid, clientID: clientID, deviceID: deviceID, now: clock())
    }
}
