/// A value the issuer seals at rest in its tables (AES-256-GCM), named with
/// the authenticated data it was sealed with. The sealing keys are never in
/// the database and differ between backends (SQLite: one key file per
/// purpose; PostgreSQL: derived from `keys/master.key`), so moving the
/// state from one to the other opens each such value with the old key and
/// seals it again with the new one.
public enum SealedValue: Equatable, Sendable {
    /// `totp_credentials.sealed_secret`: a TOTP seed, bound to its user.
    case totpSeed(userID: Int64)
    /// `refresh_tokens.successor_sealed`: a spent refresh token's successor
    /// during the grace window, bound to the spent token's hash.
    case refreshSuccessor(spentTokenHash: [UInt8])
    /// `identity_providers.secret_sealed` and `.apple_key_sealed`: an
    /// upstream provider's client secret or Apple signing key, bound to the
    /// provider's name and the column.
    case identityProviderSecret(name: String, column: String)
}

/// Opens a sealed value with the source's key and seals it with the
/// target's (the issuer's logic knows both, and the formats).
public protocol SealedValueResealing {
    func reseal(_ sealed: [UInt8], as value: SealedValue) throws -> [UInt8]
}
