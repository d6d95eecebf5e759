import FoundationEssentials
import IssuerStorage
import SSOCore

/// The steps every JWT the issuer signed goes through before its claims
/// are read, in jwt-kit's fixed order: parse, pin the algorithm, refuse
/// critical extensions, find the key by kid among the published keys,
/// verify the signature. The token kind (`typ`) and the claims are checked
/// by the caller afterwards.
public struct IssuerSignedJWT {
    let keys: PublishedSigningKeyCache

    public init(keys: PublishedSigningKeyCache) { self.keys = keys }

    /// `acceptingExpiredKeys`: see PublishedSigningKeyCache.key(kid:acceptingExpired:).
    public func verify(_ token: String, acceptingExpiredKeys: Bool = false) throws -> CompactJWT {
        let jwt = try parse(token)
        try checkAlgorithm(jwt)
        try checkCriticalHeaders(jwt)
        let key = try signingKey(jwt, acceptingExpired: acceptingExpiredKeys)
        try checkSignature(jwt, key: key)
        return jwt
    }

    // RFC 7519 §7.2: three base64url parts, the header a JSON object.
    func parse(_ token: String) throws -> CompactJWT {
        do { return try CompactJWT(parsing: token) } catch {
            throw TokenRejection(.malformed, "\(error)")
        }
    }

    // RFC 8725 §3.1: "Libraries MUST enable the caller to specify a supported
    // set of algorithms and MUST NOT use any other algorithms". The issuer
    // signs with RS256 only, so `none` and HS256 (key confusion) never pass.
    func checkAlgorithm(_ jwt: CompactJWT) throws {
        guard jwt.header.alg == "RS256" else { throw TokenRejection(.unsupportedAlgorithm, "alg \(jwt.header.alg.prefix(16))") }
    }

    // RFC 7515 §4.1.11: "If any of the listed extension Header Parameters are
    // not understood and supported by the recipient, then the JWS is
    // invalid." The issuer uses no extensions, so any `crit` is refused.
    func checkCriticalHeaders(_ jwt: CompactJWT) throws {
        switch jwt.hasCriticalHeader() {
        case false?: return
        case true?: throw TokenRejection(.malformed, "crit header present")
        case nil: throw TokenRejection(.malformed, "header reread failed")
        }
    }

    // RFC 7515 §4.1.4: kid names the key. Only keys the issuer publishes
    // count; `jku`, `jwk`, `x5u` and `x5c` are ignored (RFC 8725 §3.10).
    func signingKey(_ jwt: CompactJWT, acceptingExpired: Bool) throws -> RSAKey {
        guard let kid = jwt.header.kid, !kid.isEmpty else { throw TokenRejection(.unknownKey, "no kid") }
        guard let key = try keys.key(kid: kid, acceptingExpired: acceptingExpired) else { throw TokenRejection(.unknownKey, "kid \(kid.prefix(64)) not published") }
        return key
    }

    // RFC 7515 §5.2 step 8: validate the signature over the signing input.
    func checkSignature(_ jwt: CompactJWT, key: RSAKey) throws {
        do { try jwt.verifyRS256(keyFor: { _ in key }) } catch {
            throw TokenRejection(.invalidSignature, "\(error)")
        }
    }
}
