import SSOCore

/// What the `subject_token` of a Native SSO exchange says, once verified.
public struct NativeSSOSubjectToken: Equatable, Sendable {
    public let subject: String
    /// The app the ID token was issued to (its single `aud`): app #1.
    public let clientID: String
    public let sid: String
    public let diHash: String?
    public let dsHash: String?
}

/// Verifies app #1's ID token presented as `subject_token`.
///
/// Native SSO §4.3 (draft 07), paraphrased: the authorization server
/// validates the id_token it issued (its own signature and `iss`) before
/// relying on its `sid` and `ds_hash`. Like an `id_token_hint` (RP-Initiated
/// Logout §4: "even when the exp time has passed"), an expired ID token is
/// accepted: app #2 may read it from the shared keychain long after issue;
/// what limits its use is the live session and the device binding, both
/// checked afterwards. Keys: published ones, and superseded ones that left
/// the JWKS; never a retired key (IssuerSignedJWT, acceptingExpiredKeys).
public struct NativeSSOSubjectTokenVerifier {
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
    }

    public func verify(_ token: String) throws -> NativeSSOSubjectToken {
        let jwt = try signed.verify(token, acceptingExpiredKeys: true)
        try checkType(jwt)
        let claims: Claims
        do { claims = try jwt.claims(as: Claims.self) } catch { throw TokenRejection(.malformed, "ID token claims do not decode") }
        try checkIssuer(claims)
        // The issuer writes exactly one audience, the client (see IDTokenHintVerifier).
        guard claims.aud.values.count == 1, let clientID = claims.aud.values.first else {
            throw TokenRejection(.malformed, "aud is not a single client")
        }
        // Native SSO §3.4.1: the ID token "MUST include the sid claim"; without
        // it there is no session to tie app #2's tokens to.
        guard let sid = claims.sid, !sid.isEmpty else { throw TokenRejection(.malformed, "no sid") }
        return NativeSSOSubjectToken(subject: claims.sub, clientID: clientID, sid: sid, diHash: claims.di_hash, dsHash: claims.ds_hash)
    }

    // RFC 8725 §3.11 (explicit typing): an access token (`at+jwt`) is not an ID token.
    func checkType(_ jwt: CompactJWT) throws {
        if let type = jwt.header.typ, type.uppercased() != "JWT" { throw TokenRejection(.wrongType, "typ \(type.prefix(32))") }
    }

    // OIDC Core §3.1.3.7 step 2: "The Issuer Identifier for the OpenID
    // Provider ... MUST exactly match the value of the iss (issuer) Claim."
    func checkIssuer(_ claims: Claims) throws {
        guard claims.iss == issuer else { throw TokenRejection(.wrongIssuer, "iss \(claims.iss.prefix(128))") }
    }
}
