import IssuerStorage
import SSOCore

/// Seals an upstream provider's client secret, and Apple's signing key,
/// for the database: AES-256-GCM under a key never in the database
/// (SealingKeySource, purpose `idp-seal`), so a copy of the database alone
/// cannot act as this issuer at the provider. The provider's name and the
/// column are the authenticated data: a sealed value moved to another row
/// or column does not open.
public final class ProviderSecretSealer {
    /// The two sealed columns of `identity_providers`.
    public enum Column: String, Sendable {
        case secret = "secret_sealed"
        case appleKey = "apple_key_sealed"
    }

    let keys: any SealingKeySource
    private var cachedKey: [UInt8]?

    public init(keys: any SealingKeySource) { self.keys = keys }

    public func seal(_ value: [UInt8], provider: String, column: Column) throws -> [UInt8] {
        try AESGCM.seal(value, key: key(creatingIfMissing: true), authenticating: Self.context(provider, column.rawValue))
    }

    public func open(_ sealed: [UInt8], provider: String, column: Column) throws -> [UInt8] {
        try AESGCM.open(sealed, key: key(creatingIfMissing: false), authenticating: Self.context(provider, column.rawValue))
    }

    static func context(_ provider: String, _ column: String) -> [UInt8] {
        Array("gatehouse-idp-v1 \(column)\u{0}".utf8) + Array(provider.utf8)
    }

    /// The key, read once per process.
    private func key(creatingIfMissing: Bool) throws -> [UInt8] {
        if let cachedKey { return cachedKey }
        guard let key = try keys.key(.identityProvider, create: creatingIfMissing) else {
            throw KeyStoreError(description: "the identity-provider sealing key is missing: provider secrets cannot be opened")
        }
        cachedKey = key
        return key
    }
}
