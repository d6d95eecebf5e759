import IssuerStorage
import SSOCore

/// What `/revoke` revokes, each in its own write unit: a grant (its
/// refresh token family with every access token it issued, GrantRevocation)
/// or one access token.
public struct TokenRevocation {
    let storage: any IssuerStorage
    let accessTokenLifetime: Int
    let clock: Clock

    public func revokeGrant(familyID: String) throws {
        try storage.write { tx in try GrantRevocation.revoke(familyID: familyID, accessTokenLifetime: accessTokenLifetime, tx, now: clock()) }
    }

    /// A token past exp plus the verifier's leeway is refused everywhere
    /// anyway and needs no row. The row keeps the token's own exp; the
    /// Sweeper removes it once exp plus that leeway has passed.
    public func revokeAccessToken(jti: String, expiresAt: Int64) throws {
        guard expiresAt + IssuerAccessTokenVerifier.leeway > clock() else { return }
        try storage.write { tx in try tx.revokedAccessTokens.revoke(jti: jti, expiresAt: expiresAt) }
    }
}
