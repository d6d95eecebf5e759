/// One device secret as stored (never the secret itself).
public struct DeviceSecretRecord: Equatable, Sendable {
    public let secretHash: [UInt8]
    public let sid: String
    public let userID: Int64
    public let clientID: String
    public let deviceID: String?
    public let expiresAt: Int64
    /// The scope the sign-in that issued this secret granted: the most a
    /// token exchange from it may grant. Nil on rows from before that was
    /// recorded.
    public let scope: [String]?

    public init(secretHash: [UInt8], sid: String, userID: Int64, clientID: String, deviceID: String?, expiresAt: Int64, scope: [String]?) {
        self.secretHash = secretHash
        self.sid = sid
        self.userID = userID
        self.clientID = clientID
        self.deviceID = deviceID
        self.expiresAt = expiresAt
        self.scope = scope
    }
}

/// Live means: not revoked and not expired (the session is the caller's to check).
public protocol DeviceSecretReads {
    func live(secretHash: [UInt8], now: Int64) throws -> DeviceSecretRecord?
    /// The newest live secret issued to `clientID` in session `sid`, or only
    /// among those whose sign-in named `deviceID`.
    func newestLive(sid: String, clientID: String, deviceID: String?, now: Int64) throws -> DeviceSecretRecord?
}

public protocol DeviceSecretStore: DeviceSecretReads {
    /// `codeHash`: the code whose redemption issued it (revoked with it on a replay).
    func insert(_ record: DeviceSecretRecord, codeHash: [UInt8]?, createdAt: Int64) throws
    func revokeAll(sid: String, at now: Int64) throws
    func revokeAll(issuedByCodeHash codeHash: [UInt8], at now: Int64) throws
    /// Deletes every device secret of the user, in any state (erasure);
    /// returns how many.
    func deleteAll(userID: Int64) throws -> Int
}
