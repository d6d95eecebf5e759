import IssuerStorage
import SSOCore

/// Seals again, under another deployment's keys, what the issuer seals at
/// rest in its tables: `ssoctl migrate` moves a home's state from SQLite
/// (one key file per purpose, `keys/totp-seal.key`, `keys/refresh-seal.key`)
/// to PostgreSQL (keys derived from `keys/master.key`). Each value is opened
/// with the old key and the authenticated data it was sealed with, and
/// sealed with the same data under the new key; one that does not open
/// fails the move instead of arriving unreadable.
public final class SealedSecretsMove: SealedValueResealing {
    let totpFrom: TOTPSecretSealer
    let totpTo: TOTPSecretSealer
    let from: any SealingKeySource
    let to: any SealingKeySource
    let providerFrom: ProviderSecretSealer
    let providerTo: ProviderSecretSealer
    private var refreshKeys: (from: [UInt8], to: [UInt8])?

    public init(from: any SealingKeySource, to: any SealingKeySource) {
        self.from = from
        self.to = to
        totpFrom = TOTPSecretSealer(keys: from)
        totpTo = TOTPSecretSealer(keys: to)
        providerFrom = ProviderSecretSealer(keys: from)
        providerTo = ProviderSecretSealer(keys: to)
    }

    public func reseal(_ sealed: [UInt8], as value: SealedValue) throws -> [UInt8] {
        switch value {
        case .totpSeed(let userID):
            return try totpTo.seal(try totpFrom.open(sealed, userID: userID), userID: userID)
        case .refreshSuccessor(let spentTokenHash):
            let keys = try refreshSuccessorKeys()
            let successor = try RefreshSuccessorSealing.open(sealed, key: keys.from, spentTokenHash: spentTokenHash)
            return try RefreshSuccessorSealing.seal(successor, key: keys.to, spentTokenHash: spentTokenHash)
        case .identityProviderSecret(let name, let columnName):
            guard let column = ProviderSecretSealer.Column(rawValue: columnName) else {
                throw KeyStoreError(description: "identity_providers.\(columnName) is not a sealed column")
            }
            return try providerTo.seal(try providerFrom.open(sealed, provider: name, column: column), provider: name, column: column)
        }
    }

    /// Read once. The old key must exist where a value was sealed with it.
    private func refreshSuccessorKeys() throws -> (from: [UInt8], to: [UInt8]) {
        if let refreshKeys { return refreshKeys }
        guard let old = try from.key(.refreshSuccessor, create: false) else {
            throw KeyStoreError(description: "the refresh sealing key is missing: sealed refresh successors cannot be opened")
        }
        guard let new = try to.key(.refreshSuccessor, create: true) else { throw KeyStoreError(description: "no refresh sealing key") }
        refreshKeys = (old, new)
        return (old, new)
    }
}
