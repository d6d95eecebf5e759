import FoundationEssentials
import SSOCore

/// Offline validation of a JWT access token (RS256, ES256 or EdDSA), in a fixed order as in
/// jwt-kit: credentials, structure, header (alg, typ, crit), key by kid,
/// signature, and only then the claims, each check its own function with
/// the current time passed in. The header and signature steps are SSOCore's
/// one JWS pipeline (`CompactJWT.verify`); this type is the policy over it:
/// the issuer's algorithms, `at+jwt`, keys from the issuer's JWKS, then iss, the time
/// window, aud and scope.
///
/// Choices where the RFCs leave room:
/// - An `alg` other than RS256, ES256 and EdDSA (`none`, HS256, ...) is
///   `invalid_signature`: the token is not signed in a way this server
///   accepts; so is a kid whose key is of another algorithm than `alg`.
/// - A wrong or missing `typ`, or any `crit` header, is `malformed_token`.
/// - A missing `kid` is `unknown_signing_key` (no key can be chosen).
/// - `nbf` or `iat` further in the future than the leeway is `token_expired`
///   with "not valid yet": the token is outside its validity window.
/// - `jku`, `x5u`, `jwk` and `x5c` headers are ignored: keys come from the
///   issuer's JWKS only (RFC 8725 §3.10 warns against following them).
public struct AccessTokenValidator {
    public let policy: AccessTokenPolicy
    public let keys: JWKSCache
    let verifiedTokens: VerifiedTokenCache

    /// `verifiedTokenCapacity` 0 turns the verified-token cache off.
    public init(policy: AccessTokenPolicy, keys: JWKSCache, verifiedTokenCapacity: Int = 512) {
        self.policy = policy
        self.keys = keys
        self.verifiedTokens = VerifiedTokenCache(capacity: verifiedTokenCapacity)
    }

    /// The verified claims of an `Authorization: Bearer` request, or a
    /// `BearerError` (or a `SigningKeysUnavailableError` while no JWKS
    /// could ever be fetched). A DPoP-bound token is refused here: it is
    /// good only with its proof (`DPoPResourceGuard`).
    public func validate(authorization: String?, now: Int) throws -> AccessTokenClaims {
        try validateBearer(try bearerToken(authorization), now: now)
    }

    /// A token presented under the Bearer scheme.
    public func validateBearer(_ token: String, now: Int) throws -> AccessTokenClaims {
        let claims = try verifiedClaims(token, now: now)
        try checkNotBound(claims)
        return claims
    }

    /// The token's own checks, whatever the scheme it came in: from the
    /// verified-token cache, or in full and then cached.
    public func verifiedClaims(_ token: String, now: Int) throws -> AccessTokenClaims {
        if let claims = try previouslyVerified(token, now: now) { return claims }
        let (claims, kid) = try verify(token, now: now)
        verifiedTokens.insert(.init(claims: claims, kid: kid, keySetGeneration: keys.generation), for: token)
        return claims
    }

    /// A token verified before under the current key set, its key still
    /// published (the lookup also keeps the JWKS refresh schedule): only the
    /// time window can have changed since.
    func previouslyVerified(_ token: String, now: Int) throws -> AccessTokenClaims? {
        guard let entry = verifiedTokens.entry(for: token) else { return nil }
        guard entry.keySetGeneration == keys.generation, try keys.key(for: entry.kid, now: now) != nil,
              entry.keySetGeneration == keys.generation else {
            verifiedTokens.remove(token)
            return nil
        }
        do { try checkTimeWindow(entry.claims, now: now) } catch {
            verifiedTokens.remove(token)
            throw error
        }
        return entry.claims
    }

    /// The full check of a token seen for the first time, in the fixed order.
    func verify(_ token: String, now: Int) throws -> (AccessTokenClaims, kid: String) {
        let jwt = try parse(token)
        let verified = try verifySignature(jwt, now: now)
        let claims = try decodeClaims(verified)
        try checkIssuer(claims)
        try checkTimeWindow(claims, now: now)
        try checkAudience(claims)
        try checkScope(claims)
        return (claims, verified.kid)
    }

    // RFC 6750 §2.1: "clients SHOULD make authenticated requests with a bearer
    // token using the "Authorization" request header field with the "Bearer"
    // HTTP authorization scheme."
    func bearerToken(_ authorization: String?) throws -> String {
        switch BearerCredentials.extract(fromAuthorization: authorization) {
        case .absent:
            throw policy.error(.missingToken, "an access token is required (Authorization: Bearer)")
        case .malformed(let reason):
            throw policy.error(.malformedToken, "the Authorization header is not a valid Bearer credential", detail: reason)
        case .token(let token):
            return token
        }
    }

    // RFC 7519 §7.2: three base64url parts, the header a JSON object.
    func parse(_ token: String) throws -> CompactJWT {
        do { return try CompactJWT(parsing: token) } catch {
            throw policy.error(.malformedToken, "the access token is not a well-formed JWT", detail: "\(error)")
        }
    }

    // RFC 8725 §3.1: "Libraries MUST enable the caller to specify a supported
    // set of algorithms and MUST NOT use any other algorithms when performing
    // cryptographic operations." RFC 9068 §4: "The resource server MUST reject
    // any JWT in which the value of "alg" is "none"." The supported set here
    // is the issuer's algorithms, RS256, ES256 and EdDSA (no HS256 key
    // confusion; each key verifies its own algorithm only, JWK.verificationKey).
    static let algorithms: [JWSAlgorithm] = [.rs256, .es256, .edDSA]

    // RFC 9068 §4: "Resource servers MUST verify that the "typ" header value is
    // "at+jwt" or "application/at+jwt" and reject tokens carrying any other
    // value." (RFC 7515 §4.1.9: media type names are case-insensitive.)
    static let types = JWTTypes.required(["at+jwt"], allowingApplicationPrefix: true)

    /// The header and signature checks of the SSOCore pipeline, in its order
    /// (alg, typ, crit, kid, signature), each refusal worded for this API.
    ///
    /// RFC 7515 §4.1.11 (crit): "If any of the listed extension Header
    /// Parameters are not understood and supported by the recipient, then the
    /// JWS is invalid." This server supports no extensions.
    /// RFC 7515 §4.1.4: "The "kid" (key ID) Header Parameter is a hint
    /// indicating which key was used to secure the JWS." RFC 9068 §4: "The
    /// resource server MUST use the keys provided by the authorization server."
    /// RFC 7515 §5.2 step 8: "Validate the JWS Signature against the JWS
    /// Signing Input ... in the manner defined for the algorithm being used".
    func verifySignature(_ jwt: CompactJWT, now: Int) throws -> VerifiedJWT {
        do {
            return try jwt.verify(algorithms: Self.algorithms, types: Self.types, keys: { try keys.key(for: $0, now: now) })
        } catch let error as JWTError {
            throw refusal(error, jwt)
        }
    }

    /// A pipeline refusal as this API's `BearerError`: client text and
    /// metric label by step, the log detail as it has always read.
    func refusal(_ error: JWTError, _ jwt: CompactJWT) -> BearerError {
        switch error.code {
        case .malformed:
            policy.error(.malformedToken, "the access token is not a well-formed JWT", detail: "\(error)")
        case .unsupportedAlgorithm:
            policy.error(.invalidSignature, "the access token is not signed with RS256, ES256 or EdDSA", detail: error.detail)
        case .wrongType:
            policy.error(.malformedToken, "the token is not a JWT access token (typ at+jwt)", detail: error.detail)
        case .criticalHeader:
            policy.error(.malformedToken, "the access token uses unsupported critical header parameters", detail: error.detail)
        case .missingKeyID:
            policy.error(.unknownSigningKey, "the access token names no signing key (kid)", detail: error.detail)
        case .unknownKey:
            policy.error(.unknownSigningKey, "the access token is signed with a key the issuer does not publish",
                         detail: "kid \((jwt.header.kid ?? "").prefix(64)) not in JWKS")
        case .invalidSignature:
            policy.error(.invalidSignature, "the access token signature does not verify", detail: "\(error)")
        }
    }

    // RFC 9068 §2.2: iss, exp, aud, sub, iat (among others) are REQUIRED.
    func decodeClaims(_ jwt: VerifiedJWT) throws -> AccessTokenClaims {
        do { return try jwt.claims(as: AccessTokenClaims.self) } catch {
            throw policy.error(.malformedToken, "the access token claims are missing or of the wrong type", detail: "\(error)")
        }
    }

    // RFC 9068 §4: "The issuer identifier for the authorization server ... MUST
    // exactly match the value of the "iss" claim."
    func checkIssuer(_ claims: AccessTokenClaims) throws {
        guard claims.issuer == policy.issuer else {
            throw policy.error(.invalidIssuer, "the access token was not issued by \(policy.issuer)",
                               detail: "iss \(claims.issuer.prefix(128))")
        }
    }

    // RFC 9068 §4: "The current time MUST be before the time represented by the
    // "exp" claim. Implementers MAY provide for some small leeway, usually no
    // more than a few minutes, to account for clock skew."
    // RFC 7519 §4.1.5: "the current date/time MUST be after or equal to the
    // not-before date/time listed in the "nbf" claim."
    // A token issued (iat) in the future is refused the same way.
    func checkTimeWindow(_ claims: AccessTokenClaims, now: Int) throws {
        let now = Double(now)
        let window = JWTTimeWindow(leeway: Double(policy.leeway))
        switch window.violation(expiresAt: claims.expiresAt, notBefore: claims.notBefore, issuedAt: claims.issuedAt, now: now) {
        case nil:
            return
        case .expired?:
            throw policy.error(.tokenExpired, "the access token has expired", detail: "exp \(claims.expiresAt), now \(now)")
        case .notYetValid?:
            throw policy.error(.tokenExpired, "the access token is not valid yet", detail: "nbf \(claims.notBefore ?? 0), now \(now)")
        case .issuedInFuture?:
            throw policy.error(.tokenExpired, "the access token is not valid yet", detail: "iat \(claims.issuedAt), now \(now)")
        }
    }

    // RFC 9068 §4: "The resource server MUST validate that the "aud" claim
    // contains a resource indicator value corresponding to an identifier the
    // resource server expects for itself. The JWT access token MUST be rejected
    // if "aud" does not contain a resource indicator of the current resource
    // server as a valid audience."
    func checkAudience(_ claims: AccessTokenClaims) throws {
        guard claims.audience.values.contains(policy.audience) else {
            throw policy.error(.invalidAudience, "the access token is not meant for \(policy.audience)",
                               detail: "aud \(claims.audience.values.joined(separator: " ").prefix(256))")
        }
    }

    // RFC 9449 §7.2: "such a protected resource MUST reject a DPoP-bound
    // access token received as a bearer token per [RFC6750]." Checked after
    // the token's own checks, so an expired or forged bound token is refused
    // for what it is.
    func checkNotBound(_ claims: AccessTokenClaims) throws {
        guard claims.confirmation == nil else {
            throw policy.error(.tokenRequiresDPoP,
                               "the access token is bound to a DPoP key: send it as Authorization: DPoP with a DPoP proof",
                               detail: "cnf.jkt present under Bearer")
        }
    }

    // RFC 6750 §3.1 insufficient_scope: "The request requires higher privileges
    // than provided by the access token." RFC 9068 §2.2.3: the "scope" claim
    // carries the scopes granted; this resource needs its own one.
    func checkScope(_ claims: AccessTokenClaims) throws {
        guard claims.scopes.contains(Substring(policy.requiredScope)) else {
            throw policy.error(.insufficientScope, "the access token does not grant \(policy.requiredScope)",
                               detail: "scope \((claims.scope ?? "").prefix(256))")
        }
    }
}
