import IssuerStorage

/// Revoking a grant: its refresh token family and every access token it
/// issued (each carries the family as `grant_id`), in the caller's write
/// unit. RFC 7009 §2.1: revoking a refresh token "SHOULD also invalidate
/// all access tokens based on the same authorization grant"; and RFC 9700
/// §4.14.2's reuse detection revokes what a thief may already hold.
public enum GrantRevocation {
    /// `accessTokenLifetime`: the issuer's, the longest any client's access
    /// token lives (a client's own may have been longer before an update):
    /// the grant's last access token expires within it, and the revocation
    /// is kept until then.
    public static func revoke(familyID: String, accessTokenLifetime: Int, _ tx: any IssuerWrites, now: Int64) throws {
        try tx.refreshTokens.revokeFamily(familyID, at: now)
        try tx.revokedAccessTokens.revoke(grantID: familyID, expiresAt: now + Int64(accessTokenLifetime))
    }
}
