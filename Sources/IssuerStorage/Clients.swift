/// A registered client.
public struct Client: Equatable, Sendable {
    public let clientID: String
    /// scrypt of the client secret; nil for a public client.
    public let secretHash: String?
    public let scopes: [String]
    public let nativeSSOGroup: String?
    public let redirectURIs: [String]
    public let postLogoutRedirectURIs: [String]

    public var isConfidential: Bool { secretHash != nil }

    public init(clientID: String, secretHash: String?, scopes: [String], nativeSSOGroup: String?, redirectURIs: [String],
                postLogoutRedirectURIs: [String]) {
        self.clientID = clientID
        self.secretHash = secretHash
        self.scopes = scopes
        self.nativeSSOGroup = nativeSSOGroup
        self.redirectURIs = redirectURIs
        self.postLogoutRedirectURIs = postLogoutRedirectURIs
    }
}

public protocol ClientReads {
    func find(clientID: String) throws -> Client?
    /// Every client, by client id.
    func list() throws -> [Client]
}

public protocol ClientStore: ClientReads {
    func insert(_ client: Client, at now: Int64) throws
}

/// Per-group Native SSO settings. A group exists while some client names
/// it; without a settings row every setting is at its default.
public protocol NativeSSOGroupReads {
    /// True only for a group whose seed `device_id` profile is switched on.
    func allowsDeviceID(group: String) throws -> Bool
    /// The client ids in `group`, sorted.
    func members(group: String) throws -> [String]
}

public protocol NativeSSOGroupStore: NativeSSOGroupReads {
    func setAllowsDeviceID(_ allowed: Bool, group: String) throws
}
