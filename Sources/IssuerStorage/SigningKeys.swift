/// One signing key as stored: metadata and its public key. Its state
/// (next, active, published, expired, retired) follows from the times and
/// the clock, and is the issuer's business (SigningKeys).
public struct StoredSigningKey: Equatable, Sendable {
    public let kid: String
    public let publicPEM: String
    public let createdAt: Int64
    public let activatesAt: Int64
    public let retiredAt: Int64?
    /// The JWS algorithm it signs with: `RS256`, `ES256` or `EdDSA`. Each
    /// algorithm rotates on its own (SigningKeys).
    public let algorithm: String

    public init(kid: String, publicPEM: String, createdAt: Int64, activatesAt: Int64, retiredAt: Int64? = nil, algorithm: String = "RS256") {
        self.kid = kid
        self.algorithm = algorithm
        self.publicPEM = publicPEM
        self.createdAt = createdAt
        self.activatesAt = activatesAt
        self.retiredAt = retiredAt
    }
}

public protocol SigningKeyReads {
    /// Every key, newest activation first; insertion order breaks ties (two
    /// rotations in one second).
    func all() throws -> [StoredSigningKey]
    /// The private key of `kid` (PEM), nil once retired or when missing.
    /// Where it lives is the backend's: a 0600 file beside the SQLite
    /// database, or sealed with the master key in PostgreSQL (so every node
    /// signs with the same key).
    func privateKeyPEM(kid: String) throws -> [UInt8]?
}

public protocol SigningKeyStore: SigningKeyReads {
    func insert(_ key: StoredSigningKey, privateKeyPEM: [UInt8]) throws
    /// Withdraws the key and deletes its private part.
    func retire(kid: String, at now: Int64) throws
}
