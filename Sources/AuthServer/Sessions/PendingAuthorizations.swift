import IssuerStorage
import SSOCore

/// Pending requests between /authorize and /login. The browser holds a
/// random secret in the `gh_login` cookie (HttpOnly, SameSite, Path=/login);
/// the login form carries a second random value, `req`, which must match.
/// A cross-site form post carries neither (login CSRF defence).
public final class PendingAuthorizations {
    public static let cookieName = "gh_login"
    public static let lifetime = 600
    let storage: any IssuerStorage
    let clock: Clock

    public init(storage: any IssuerStorage, clock: @escaping Clock = systemClock) {
        self.storage = storage
        self.clock = clock
    }

    /// Stores the request; returns the cookie secret and the form token.
    public func create(_ request: AuthorizationRequest, replacesSID: String?) throws -> (cookieSecret: String, formToken: String) {
        let cookieSecret = SecureRandom.token()
        let formToken = SecureRandom.token(byteCount: 24)
        let now = clock()
        let pending = PendingAuthorization(request: request, formTokenHash: SecretHash.of(formToken), replacesSID: replacesSID)
        try storage.write {
            try $0.pendingAuthorizations.insert(pending, secretHash: SecretHash.of(cookieSecret), createdAt: now,
                                                expiresAt: now + Int64(Self.lifetime))
        }
        return (cookieSecret, formToken)
    }

    public func find(cookieSecret: String) throws -> PendingAuthorization? {
        guard !cookieSecret.isEmpty, cookieSecret.utf8.count <= 128 else { return nil }
        return try storage.read.pendingAuthorizations.find(secretHash: SecretHash.of(cookieSecret), now: clock())
    }

    /// Single use, in the caller's write unit: of two concurrent logins with
    /// one pending request only one completes it.
    public func consume(cookieSecret: String, _ tx: any IssuerWrites) throws -> PendingAuthorization? {
        try tx.pendingAuthorizations.consume(secretHash: SecretHash.of(cookieSecret), now: clock())
    }
}
