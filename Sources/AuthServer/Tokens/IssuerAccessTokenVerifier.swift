import IssuerStorage
import SSOCore

/// The claims of an access token the issuer signed (RFC 9068 §2.2, as
/// `TokenIssuer` writes them), decoded only after the signature verified.
/// Only what userinfo, introspection and revocation use is required.
public struct PresentedAccessToken: Decodable, Equatable, Sendable {
    public let iss: String
    public let sub: String
    public let aud: AudienceClaim
    public let exp: Int64
    public let iat: Int64
    public let nbf: Int64?
    public let jti: String
    public let client_id: String
    public let scope: String
    /// Absent only from a machine client's token (client_credentials).
    public let sid: String?
    /// RFC 9449 §6.1: present on a DPoP-bound token.
    public let cnf: Confirmation?
    /// The grant (refresh token family) it was issued in; absent from a
    /// machine client's token and from tokens issued before it was added.
    public let grant_id: String?
    /// The client registration it was issued under; absent only from
    /// tokens signed before registrations had ids.
    public let client_registration: String?

    public var scopes: [Substring] { scope.split(separator: " ") }
}

/// An access token that is good right now, with the account it speaks for:
/// none for a machine client's own token (no `sid`, `sub` = the client).
public struct ActiveAccessToken: Sendable {
    public let claims: PresentedAccessToken
    public let user: User?
    public let session: SSOSession?
}

/// Verifies access tokens the issuer signed, offline with its own published
/// keys, then (unlike the resource servers, which cannot) against what only
/// the issuer knows: revoked `jti`s, ended sessions, disabled users.
public final class IssuerAccessTokenVerifier {
    /// RFC 9068 §4: "Implementers MAY provide for some small leeway, usually
    /// no more than a few minutes, to account for clock skew."
    public static let leeway: Int64 = 60

    let issuer: String
    let signed: IssuerSignedJWT
    let storage: any IssuerStorage
    let clients: ClientRegistry
    let clock: Clock

    public init(issuer: String, storage: any IssuerStorage, keys: PublishedSigningKeyCache, clients: ClientRegistry,
                clock: @escaping Clock = systemClock) {
        self.issuer = issuer
        signed = IssuerSignedJWT(keys: keys)
        self.storage = storage
        self.clients = clients
        self.clock = clock
    }

    /// Signature, kind and issuer, whatever the time (revocation accepts
    /// expired tokens: RFC 7009 §2.1 only asks that the server can find them).
    public func signedClaims(_ token: String) throws -> PresentedAccessToken {
        let jwt = try signed.verify(token, types: Self.types)
        let claims = try decodeClaims(jwt)
        try checkIssuer(claims)
        return claims
    }

    /// Everything: the signed claims, the validity window with `leeway`,
    /// then revocation, session and account.
    public func active(_ token: String, leeway: Int64 = IssuerAccessTokenVerifier.leeway) throws -> ActiveAccessToken {
        try active(signedClaims(token), leeway: leeway)
    }

    /// The checks after the signature, for claims `signedClaims` returned.
    public func active(_ claims: PresentedAccessToken, leeway: Int64 = IssuerAccessTokenVerifier.leeway) throws -> ActiveAccessToken {
        try checkTimeWindow(claims, now: clock(), leeway: leeway)
        try checkNotRevoked(claims)
        try checkClient(claims)
        guard let sid = claims.sid else {
            // Only a machine client's token has no sid, and it speaks for
            // the client itself (TokenIssuer.signMachineToken).
            guard claims.sub.bytesEqual(claims.client_id) else { throw TokenRejection(.malformed, "a user's token without sid") }
            return ActiveAccessToken(claims: claims, user: nil, session: nil)
        }
        let user = try checkUser(claims)
        let session = try checkSession(sid: sid, user: user)
        return ActiveAccessToken(claims: claims, user: user, session: session)
    }

    /// A deleted client's tokens stop working at the issuer at once
    /// (`ssoctl client delete`), read from the cache the change marker
    /// keeps fresh; and a client registered again under the same id is
    /// another client, so a token must name the registration that stands
    /// now. A token without `client_registration` was signed before
    /// registrations had ids: it dies within one access-token lifetime of
    /// that upgrade, and is judged by the id alone until then.
    func checkClient(_ claims: PresentedAccessToken) throws {
        guard let client = try clients.find(clientID: claims.client_id) else { throw TokenRejection(.clientDeleted, "client no longer registered") }
        if let registration = claims.client_registration, !registration.bytesEqual(client.registrationID) {
            throw TokenRejection(.clientDeleted, "client deleted and registered again since the token was issued")
        }
    }

    // RFC 9068 §4: "verify that the "typ" header value is "at+jwt" or
    // "application/at+jwt" and reject tokens carrying any other value" —
    // so an ID token (typ JWT) is never accepted as an access token
    // (RFC 8725 §3.11, explicit typing). Media types are case-insensitive.
    static let types = JWTTypes.required(["at+jwt"], allowingApplicationPrefix: true)

    // RFC 9068 §2.2: iss, exp, aud, sub, client_id, iat, jti are REQUIRED.
    func decodeClaims(_ jwt: VerifiedJWT) throws -> PresentedAccessToken {
        do { return try jwt.claims(as: PresentedAccessToken.self) } catch {
            throw TokenRejection(.malformed, "claims do not decode")
        }
    }

    // RFC 9068 §4: the issuer identifier "MUST exactly match the value of
    // the "iss" claim".
    func checkIssuer(_ claims: PresentedAccessToken) throws {
        guard claims.iss.bytesEqual(issuer) else { throw TokenRejection(.wrongIssuer, "iss \(claims.iss.prefix(128))") }
    }

    // RFC 9068 §4: "The current time MUST be before the time represented by
    // the "exp" claim." RFC 7519 §4.1.5: not before "nbf". A token issued
    // (iat) in the future is refused the same way.
    func checkTimeWindow(_ claims: PresentedAccessToken, now: Int64, leeway: Int64) throws {
        let window = JWTTimeWindow(leeway: Double(leeway))
        switch window.violation(expiresAt: Double(claims.exp), notBefore: claims.nbf.map(Double.init), issuedAt: Double(claims.iat),
                                now: Double(now)) {
        case nil: return
        case .expired?: throw TokenRejection(.expired, "exp \(claims.exp), now \(now)")
        case .notYetValid?: throw TokenRejection(.notYetValid, "nbf \(claims.nbf ?? 0), now \(now)")
        case .issuedInFuture?: throw TokenRejection(.notYetValid, "iat \(claims.iat), now \(now)")
        }
    }

    // RFC 7009 §2: once revoked, a token must not be honoured again by the
    // issuer (the resource servers, offline, honour it until it expires);
    // §2.1: nor once the grant it was issued in is revoked.
    func checkNotRevoked(_ claims: PresentedAccessToken) throws {
        let revoked = storage.read.revokedAccessTokens
        guard try !revoked.isRevoked(jti: claims.jti) else { throw TokenRejection(.revoked, "jti revoked") }
        if let grantID = claims.grant_id, try revoked.isRevoked(grantID: grantID) { throw TokenRejection(.revoked, "grant revoked") }
    }

    /// The account as it is now: deleted or disabled users lose their tokens.
    func checkUser(_ claims: PresentedAccessToken) throws -> User {
        guard let user = try storage.read.users.find(subject: claims.sub) else { throw TokenRejection(.userDisabled, "no such subject") }
        guard !user.disabled else { throw TokenRejection(.userDisabled, "user disabled") }
        return user
    }

    /// A token is bound to the SSO session it was issued in (its `sid`):
    /// logout, expiry or `ssoctl sessions revoke` end it.
    func checkSession(sid: String, user: User) throws -> SSOSession {
        guard let session = try storage.read.sessions.live(sid: sid, now: clock()), session.userID == user.id else {
            throw TokenRejection(.sessionEnded, "session ended")
        }
        return session
    }
}
