import FoundationEssentials
import IssuerStorage
import SSOCore

public struct TOTPSealError: Error, CustomStringConvertible {
    public let description: String
}

/// Seals TOTP seeds for the database with AES-256-GCM under a key that is
/// never in the database (SealingKeySource: `keys/totp-seal.key`, or derived
/// from the master key). A seed cannot be stored as a hash (the issuer must
/// compute codes from it), and a copy of the database alone (a backup, a
/// dump) must not hand out every user's second factor. The user id is the
/// authenticated data, so a sealed seed moved to another user's row fails.
public final class TOTPSecretSealer {
    let keys: any SealingKeySource
    private var cachedKey: [UInt8]?

    public init(keys: any SealingKeySource) { self.keys = keys }

    /// Seals `secret` for `userID`, creating the key on first use.
    public func seal(_ secret: [UInt8], userID: Int64) throws -> [UInt8] {
        try AESGCM.seal(secret, key: key(creatingIfMissing: true), authenticating: Self.context(userID))
    }

    public func open(_ sealed: [UInt8], userID: Int64) throws -> [UInt8] {
        try AESGCM.open(sealed, key: key(creatingIfMissing: false), authenticating: Self.context(userID))
    }

    static func context(_ userID: Int64) -> [UInt8] { Array("gatehouse-totp-v1 user \(userID)".utf8) }

    /// The key, read once per process.
    private func key(creatingIfMissing: Bool) throws -> [UInt8] {
        if let cachedKey { return cachedKey }
        guard let key = try keys.key(.totp, create: creatingIfMissing) else {
            throw TOTPSealError(description: "the TOTP sealing key is missing: TOTP seeds cannot be opened")
        }
        cachedKey = key
        return key
    }
}
