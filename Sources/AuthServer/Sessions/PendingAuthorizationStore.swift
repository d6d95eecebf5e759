import SSOCore

/// An authorization request waiting for the user to sign in.
public struct PendingAuthorization: Equatable, Sendable {
    public let request: AuthorizationRequest
    public let formTokenHash: [UInt8]
    /// The session a `prompt=login` or `max_age` re-authentication replaces.
    public let replacesSID: String?
}

/// Pending requests between /authorize and /login. The browser holds a
/// random secret in the `gh_login` cookie (HttpOnly, SameSite, Path=/login);
/// the login form carries a second random value, `req`, which must match.
/// A cross-site form post carries neither (login CSRF defence).
public final class PendingAuthorizationStore {
    public static let cookieName = "gh_login"
    public static let lifetime = 600
    let database: SQLiteDatabase
    let clock: Clock

    public init(database: SQLiteDatabase, clock: @escaping Clock = systemClock) {
        self.database = database
        self.clock = clock
    }

    /// Stores the request; returns the cookie secret and the form token.
    public func create(_ request: AuthorizationRequest, replacesSID: String?) throws -> (cookieSecret: String, formToken: String) {
        let cookieSecret = SecureRandom.token()
        let formToken = SecureRandom.token(byteCount: 24)
        let now = clock()
        // Opportunistic sweep: expired pending requests are worthless.
        try database.execute("DELETE FROM pending_authorizations WHERE expires_at <= ?", [.integer(now)])
        try database.execute("""
            INSERT INTO pending_authorizations (secret_hash, form_token_hash, client_id, redirect_uri, scope, state, nonce,
                code_challenge, max_age, replaces_sid, created_at, expires_at, expected_subject) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, [.blob(SecretHash.of(cookieSecret)), .blob(SecretHash.of(formToken)), .text(request.clientID), .text(request.redirectURI),
                  .text(request.scope.joined(separator: " ")), SQLiteValue(request.state), SQLiteValue(request.nonce),
                  .text(request.codeChallenge), request.maxAge.map { .integer(Int64($0)) } ?? .null, SQLiteValue(replacesSID),
                  .integer(now), .integer(now + Int64(Self.lifetime)), SQLiteValue(request.expectedSubject)])
        return (cookieSecret, formToken)
    }

    static let columns = "client_id, redirect_uri, scope, state, nonce, code_challenge, max_age, replaces_sid, form_token_hash, expected_subject"

    public func find(cookieSecret: String) throws -> PendingAuthorization? {
        guard !cookieSecret.isEmpty, cookieSecret.utf8.count <= 128 else { return nil }
        return try database.queryOne("SELECT \(Self.columns) FROM pending_authorizations WHERE secret_hash = ? AND expires_at > ?",
                                     [.blob(SecretHash.of(cookieSecret)), .integer(clock())]).map(Self.pending)
    }

    /// Single use: one atomic DELETE … RETURNING, so two concurrent logins
    /// with one pending request cannot both complete it.
    public func consume(cookieSecret: String) throws -> PendingAuthorization? {
        try database.queryOne("DELETE FROM pending_authorizations WHERE secret_hash = ? AND expires_at > ? RETURNING \(Self.columns)",
                              [.blob(SecretHash.of(cookieSecret)), .integer(clock())]).map(Self.pending)
    }

    static func pending(_ row: SQLiteRow) -> PendingAuthorization {
        let request = AuthorizationRequest(
            clientID: row.string(0), redirectURI: row.string(1), scope: row.string(2).split(separator: " ").map(String.init),
            state: row.optionalString(3), nonce: row.optionalString(4), codeChallenge: row.string(5), prompt: [],
            maxAge: row.optionalInt(6).map(Int.init), loginHint: nil, expectedSubject: row.optionalString(9))
        return PendingAuthorization(request: request, formTokenHash: row.bytes(8), replacesSID: row.optionalString(7))
    }
}
