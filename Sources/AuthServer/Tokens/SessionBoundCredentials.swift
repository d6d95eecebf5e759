import SSOCore

/// Everything issued under one SSO session that must stop working when the
/// session ends (logout). One place, so a new kind of session-bound
/// credential is revoked by every way a session can end.
public final class SessionBoundCredentials {
    let refreshTokens: RefreshTokenStore
    let deviceSecrets: DeviceSecretStore

    public init(database: SQLiteDatabase, clock: @escaping Clock = systemClock) {
        refreshTokens = RefreshTokenStore(database: database, clock: clock)
        deviceSecrets = DeviceSecretStore(database: database, clock: clock)
    }

    /// Call inside the transaction that ends the session.
    public func revokeAll(sid: String) throws {
        // Refresh tokens of every app of the session, including those a
        // Native SSO exchange issued to other apps (bound to the same sid).
        try refreshTokens.revokeAll(sid: sid)
        // Native SSO §3.2: the device secret stands for the user's
        // authentication on the device; once the session ends it must not
        // sign any app in again.
        try deviceSecrets.revokeAll(sid: sid)
        //
        // Access tokens need nothing: the issuer (userinfo, introspection)
        // refuses any whose session has ended; the resource servers, which
        // validate offline, honour them until they expire.
    }
}
