import FoundationEssentials
import IssuerStorage
import SSOCore

/// What the issuer seals at rest with AES-256-GCM, each with a key of its own.
public enum SealingPurpose: String, Sendable {
    /// A rotated refresh token's successor, during the grace window.
    case refreshSuccessor = "refresh-seal"
    /// TOTP seeds.
    case totp = "totp-seal"
    /// The HMAC key of the token endpoint's DPoP nonces (DPoPNonces): every
    /// process and node derives the same, so any of them accepts a nonce
    /// another handed out.
    case dpopNonce = "dpop-nonce"
    /// Upstream identity providers' client secrets and Apple's signing keys.
    case identityProvider = "idp-seal"
}

/// Where the sealing keys come from. Never from the database they seal for:
/// a copy of the database alone (a backup, a dump) opens nothing.
public protocol SealingKeySource: Sendable {
    /// The key for `purpose`; created first when `create` is set and it is
    /// missing; nil when it is missing and may not be created.
    func key(_ purpose: SealingPurpose, create: Bool) throws -> [UInt8]?
}

/// One 0600 file per purpose beside the signing keys (`keys/refresh-seal.key`,
/// `keys/totp-seal.key`): the single-node (SQLite) layout.
public struct SealingKeyFiles: SealingKeySource {
    public let keysDirectory: String
    public init(keysDirectory: String) { self.keysDirectory = keysDirectory }

    public func path(_ purpose: SealingPurpose) -> String { keysDirectory + "/" + purpose.rawValue + ".key" }

    public func key(_ purpose: SealingPurpose, create: Bool) throws -> [UInt8]? {
        create ? try SecretKeyFile.loadOrCreate(path: path(purpose)) : try SecretKeyFile.load(path: path(purpose))
    }
}

/// Keys derived from the deployment's master key (`keys/master.key`, the
/// one file every node of a multi-node issuer shares), so every node seals
/// and opens alike without more files to copy (KeyDerivation, one label per
/// purpose).
public struct DerivedSealingKeys: SealingKeySource {
    let masterKey: [UInt8]
    public init(masterKey: [UInt8]) { self.masterKey = masterKey }

    public func key(_ purpose: SealingPurpose, create: Bool) throws -> [UInt8]? {
        KeyDerivation.derive(masterKey, label: "gatehouse " + purpose.rawValue + " v1")
    }
}
