// libFuzzer target: JWT parsing and verification.
//
// Two input modes, chosen by the first byte:
// - anything but 0x00: the input is a compact JWS. It goes through
//   CompactJWT(parsing:), the verify pipeline against the fixed fuzz key,
//   claims decoding (AccessTokenClaims, and a generic claims object), and the
//   resource servers' full AccessTokenValidator (alg, typ, crit, kid,
//   signature, iss, exp/nbf/iat, aud, scope) behind "Bearer ".
// - 0x00 header-JSON 0x00 claims-JSON: the target signs the two JSON texts
//   with the fixed key itself, so the checks after the signature (claim
//   types, time window, audience, scope) are reachable by mutation too.
// Oracles: no crash; a token that validates was verified by the fixed key
// with alg RS256, typ at+jwt, the expected iss/aud/scope, inside its window.
import Foundation
import FuzzSigningKey
import ResourceServer
import SSOCore

enum FuzzJWT {
    static let kid = "fuzz-key-1"
    static let issuer = "https://localhost:8443"
    static let audience = "https://localhost:8444"
    static let scope = "api:serverA"
    /// A fixed "now" inside the seed tokens' validity window.
    static let now = 1_750_000_000
    static let key = try! RSAKey.privateKey(pem: Array(fuzzSigningKeyPEM.utf8))
    static let publicKey = try! RSAKey.publicKey(pem: key.publicKeyPEM())

    struct FixedKeys: JWKSFetching {
        func fetchKeySet() throws -> JWKSet { JWKSet(keys: [try JWK(kid: FuzzJWT.kid, key: FuzzJWT.key)]) }
    }
    /// Verified-token cache off: every input gets the full check.
    static let validator = AccessTokenValidator(
        policy: AccessTokenPolicy(issuer: issuer, audience: audience, requiredScope: scope),
        keys: JWKSCache(fetcher: FixedKeys(), store: nil), verifiedTokenCapacity: 0)

    static let algorithms: [JWSAlgorithm] = [.rs256]
    static let types = JWTTypes.required(["at+jwt"], allowingApplicationPrefix: true)

    struct AnyClaims: Decodable {
        let iss: String?, sub: String?, exp: Double?, nbf: Double?, iat: Double?, jti: String?
        let aud: AudienceClaim?
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJWT(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let token: String
    if bytes.first == 0 {
        let parts = bytes.dropFirst().split(separator: 0, maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return 0 }
        let signingInput = Base64URL.encode(parts[0]) + "." + Base64URL.encode(parts[1])
        guard let signature = try? FuzzJWT.key.signRS256(Array(signingInput.utf8)) else { return 0 }
        token = signingInput + "." + Base64URL.encode(signature)
    } else {
        token = String(decoding: bytes, as: UTF8.self)
    }

    if let jwt = try? CompactJWT(parsing: token),
       let verified = try? jwt.verify(algorithms: FuzzJWT.algorithms, types: FuzzJWT.types, keys: { $0 == FuzzJWT.kid ? FuzzJWT.publicKey : nil }) {
        precondition(jwt.header.alg == "RS256" && jwt.header.kid == FuzzJWT.kid, "verified without RS256 and the kid")
        _ = try? verified.claims(as: AccessTokenClaims.self)
        _ = try? verified.claims(as: FuzzJWT.AnyClaims.self)
    }

    do {
        let claims = try FuzzJWT.validator.validate(authorization: "Bearer " + token, now: FuzzJWT.now)
        let jwt = try! CompactJWT(parsing: token)
        precondition(jwt.header.alg == "RS256", "accepted alg \(jwt.header.alg)")
        precondition(["at+jwt", "application/at+jwt"].contains(jwt.header.typ?.lowercased() ?? ""), "accepted typ \(String(describing: jwt.header.typ))")
        precondition((try? jwt.verify(algorithms: FuzzJWT.algorithms, types: FuzzJWT.types, keys: { _ in FuzzJWT.publicKey })) != nil,
                     "accepted a bad signature")
        precondition(claims.issuer == FuzzJWT.issuer, "accepted iss \(claims.issuer)")
        precondition(claims.audience.values.contains(FuzzJWT.audience), "accepted aud")
        precondition(claims.scopes.contains(Substring(FuzzJWT.scope)), "accepted scope")
        let now = Double(FuzzJWT.now)
        precondition(now < claims.expiresAt + 60 && claims.issuedAt <= now + 60 && (claims.notBefore ?? 0) <= now + 60, "accepted out of window")
    } catch is BearerError {
        // The expected refusal.
    } catch {
        preconditionFailure("validator threw something other than BearerError: \(error)")
    }
    return 0
}
