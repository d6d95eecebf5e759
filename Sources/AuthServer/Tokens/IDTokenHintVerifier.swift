import IssuerStorage
import SSOCore

/// What an ID token this issuer issued says, once verified: a logout
/// request's `id_token_hint`, or a Native SSO exchange's `subject_token`.
public struct IDTokenHint: Equatable, Sendable {
    public let subject: String
    /// The client the ID token was issued to (its single `aud`).
    public let clientID: String
    /// The SSO session the ID token was issued in.
    public let sid: String?
    /// Native SSO device bindings, when the ID token carries them.
    public let diHash: String?
    public let dsHash: String?
    /// Its `exp`: a hint may be expired, but the Native SSO seed profile
    /// accepts only an unexpired one.
    public let expiresAt: Int64?
}

/// Verifies an ID token presented back to the issuer: as `id_token_hint`
/// (OpenID Connect RP-Initiated Logout 1.0 §2, §4) and as the Native SSO
/// `subject_token`, which adds its own rules on top (NativeSSOSubjectTokenVerifier).
public struct IDTokenHintVerifier {
    let issuer: String
    let signed: IssuerSignedJWT

    public init(issuer: String, keys: PublishedSigningKeyCache) {
        self.issuer = issuer
        signed = IssuerSignedJWT(keys: keys)
    }

    struct Claims: Decodable {
        let iss: String
        let sub: String
        let aud: AudienceClaim
        let sid: String?
        let di_hash: String?
        let ds_hash: String?
        let exp: Int64?
    }

    /// RP-Initiated Logout §2: "The OP need not be listed as an audience of
    /// the ID Token when it is used as an id_token_hint value." and §4:
    /// "When an id_token_hint parameter is present, the OP MUST validate
    /// that it was the issuer of the ID Token. The OP SHOULD accept ID
    /// Tokens when the RP identified by the ID Token's audience claims and/or
    /// sid claim has a current session or had a recent session at the OP,
    /// even when the exp time has passed." So: our signature, our `iss`,
    /// any `exp`. An old ID token's key may have left the JWKS because every
    /// token it signed has expired; it still proves the token is ours, so it
    /// counts here (a retired key does not).
    public func verify(_ token: String) throws -> IDTokenHint {
        let jwt = try signed.verify(token, types: Self.types, acceptingExpiredKeys: true)
        let claims: Claims
        do { claims = try jwt.claims(as: Claims.self) } catch { throw TokenRejection(.malformed, "ID token claims do not decode") }
        // OIDC Core §3.1.3.7 step 2: "The Issuer Identifier for the OpenID
        // Provider ... MUST exactly match the value of the iss (issuer) Claim."
        guard claims.iss == issuer else { throw TokenRejection(.wrongIssuer, "iss \(claims.iss.prefix(128))") }
        // The issuer writes one audience, the client; several would leave
        // the client ambiguous (OIDC Core §2 would need `azp`).
        guard claims.aud.values.count == 1, let clientID = claims.aud.values.first else {
            throw TokenRejection(.malformed, "aud is not a single client")
        }
        return IDTokenHint(subject: claims.sub, clientID: clientID, sid: claims.sid, diHash: claims.di_hash, dsHash: claims.ds_hash,
                           expiresAt: claims.exp)
    }

    // RFC 8725 §3.11 (explicit typing): the issuer's ID tokens say `typ: JWT`
    // and its access tokens `at+jwt`; an access token is not an ID token.
    static let types = JWTTypes.ifPresent(["JWT"], allowingApplicationPrefix: false)
}
