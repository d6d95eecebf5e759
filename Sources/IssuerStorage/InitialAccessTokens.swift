/// Initial access tokens for dynamic client registration (RFC 7591 §3:
/// "the authorization server MAY require an initial access token"), made
/// by `ssoctl client registration-token`, kept only as their SHA-256, good
/// for a number of registrations until they expire.
public protocol InitialAccessTokenReads {
    /// Whether the token is known, unexpired and has a use left (read
    /// before any costly work; `consume` decides).
    func isUsable(tokenHash: [UInt8], now: Int64) throws -> Bool
}

public protocol InitialAccessTokenStore: InitialAccessTokenReads {
    func insert(tokenHash: [UInt8], createdAt: Int64, expiresAt: Int64, uses: Int64) throws
    /// Spends one use of the token, in one atomic statement: true when it
    /// was known, unexpired and had a use left. Of concurrent callers with
    /// its last use exactly one gets true.
    func consume(tokenHash: [UInt8], now: Int64) throws -> Bool
}
