import Foundation
import XCTest
@testable import SSOCore

/// `CompactJWT.verify`, the one JWS verification pipeline: what each step
/// refuses, in its fixed order, and the one time-window check.
///
/// Claims are reachable only from a `VerifiedJWT` (a compile-level fact:
/// `CompactJWT` has no `claims(as:)`, its payload is internal to SSOCore,
/// and only `verify` makes a `VerifiedJWT`), so these tests can read claims
/// only of tokens that passed.
final class JWSPipelineTests: XCTestCase {
    static let key = try! RSAKey.generate()
    static let stranger = try! RSAKey.generate()
    static let rs256: [JWSAlgorithm] = [.rs256]
    static let accessToken = JWTTypes.required(["at+jwt"], allowingApplicationPrefix: true)
    static let idToken = JWTTypes.ifPresent(["JWT"], allowingApplicationPrefix: false)

    struct Claims: Codable, Equatable { let sub: String; let exp: Int }

    static func keys(_ kid: String) -> (any JWSVerificationKey)? { kid == "k1" ? key : nil }

    /// A token with exactly this header JSON, signed RS256 by `key` unless
    /// `signature` is given.
    func token(_ headerJSON: String, claims: String = #"{"sub":"alice","exp":1}"#, key: RSAKey = JWSPipelineTests.key,
               signature: (([UInt8]) -> [UInt8])? = nil) throws -> String {
        let input = Base64URL.encode(Array(headerJSON.utf8)) + "." + Base64URL.encode(Array(claims.utf8))
        let bytes = Array(input.utf8)
        return input + "." + Base64URL.encode(try signature?(bytes) ?? key.signRS256(bytes))
    }

    func refusal(_ token: String, algorithms: [JWSAlgorithm] = JWSPipelineTests.rs256, types: JWTTypes = JWSPipelineTests.accessToken,
                 keys: (String) throws -> (any JWSVerificationKey)? = JWSPipelineTests.keys) -> JWTError.Code? {
        do {
            _ = try CompactJWT(parsing: token).verify(algorithms: algorithms, types: types, keys: keys)
            return nil
        } catch {
            return (error as? JWTError)?.code
        }
    }

    // MARK: the whole way

    func testSignParseVerifyDecode() throws {
        let token = try JWTSigner.sign(Claims(sub: "alice", exp: 1), header: JWTHeader(kid: "k1", typ: "at+jwt"), key: Self.key)
        let parsed = try CompactJWT(parsing: token)
        XCTAssertEqual(parsed.header, JWTHeader(alg: "RS256", kid: "k1", typ: "at+jwt"))
        let verified = try parsed.verify(algorithms: Self.rs256, types: Self.accessToken, keys: Self.keys)
        XCTAssertEqual(verified.kid, "k1")
        XCTAssertEqual(verified.algorithm, .rs256)
        XCTAssertEqual(try verified.claims(as: Claims.self), Claims(sub: "alice", exp: 1))
    }

    func testClaimsThatDoNotDecodeAreMalformed() throws {
        let verified = try CompactJWT(parsing: token(#"{"alg":"RS256","kid":"k1","typ":"at+jwt"}"#, claims: #"{"sub":1}"#))
            .verify(algorithms: Self.rs256, types: Self.accessToken, keys: Self.keys)
        XCTAssertThrowsError(try verified.claims(as: Claims.self)) { XCTAssertEqual(($0 as? JWTError)?.code, .malformed) }
    }

    func testMalformedTokensDoNotParse() {
        for malformed in ["", "a.b", "a.b.c.d", "!!.e30.", String(repeating: "a", count: 20_000),
                          Base64URL.encode(Array("[]".utf8)) + ".e30.", Base64URL.encode(Array(#"{"kid":"k1"}"#.utf8)) + ".e30.",
                          Base64URL.encode(Array(#"{"alg":"RS256","kid":7}"#.utf8)) + ".e30."] {
            XCTAssertThrowsError(try CompactJWT(parsing: malformed), malformed) { XCTAssertEqual(($0 as? JWTError)?.code, .malformed) }
        }
    }

    // MARK: alg (RFC 8725 §3.1)

    func testNoneAndHMACAreNeverAccepted() throws {
        let claims = Base64URL.encode(Array(#"{"sub":"alice","exp":1}"#.utf8))
        let none = Base64URL.encode(Array(#"{"alg":"none","kid":"k1","typ":"at+jwt"}"#.utf8)) + "." + claims + "."
        XCTAssertEqual(refusal(none), .unsupportedAlgorithm)
        XCTAssertEqual(refusal(none, algorithms: JWSAlgorithm.allCases), .unsupportedAlgorithm)
        // The classic key confusion: HMAC keyed with the RSA public key.
        let publicPEM = try Self.key.publicKeyPEM()
        for alg in ["HS256", "HS384", "HS512"] {
            let hmac = try token(#"{"alg":"\#(alg)","kid":"k1","typ":"at+jwt"}"#) { HMACSHA256.authenticate($0, key: publicPEM) }
            XCTAssertEqual(refusal(hmac, algorithms: JWSAlgorithm.allCases), .unsupportedAlgorithm, alg)
        }
    }

    func testAnAlgorithmOutsideTheCallersSetIsRefused() throws {
        for alg in ["RS512", "PS256", "rs256", "ES256", "EdDSA", ""] {
            XCTAssertEqual(refusal(try token(#"{"alg":"\#(alg)","kid":"k1","typ":"at+jwt"}"#)), .unsupportedAlgorithm, alg)
        }
        let rs256 = try token(#"{"alg":"RS256","kid":"k1","typ":"at+jwt"}"#)
        XCTAssertEqual(refusal(rs256, algorithms: [.es256, .edDSA]), .unsupportedAlgorithm)
        XCTAssertEqual(refusal(rs256, algorithms: []), .unsupportedAlgorithm)
        XCTAssertNil(refusal(rs256))
    }

    /// The key algorithm abstraction: an ES256 token verifies with a P-256
    /// key through the same pipeline, and a kid naming a key of another
    /// algorithm than the token's `alg` is refused.
    func testES256ThroughThePipelineAndAKeyOfAnotherAlgorithm() throws {
        let signer = try ES256PrivateKey.generate()
        let jwk = try signer.publicJWK()
        let p256 = try ProofVerificationKey.p256(x: Base64URL.decode(jwk.x!)!, y: Base64URL.decode(jwk.y!)!)
        let es256 = try token(#"{"alg":"ES256","kid":"ec","typ":"at+jwt"}"#) { try! signer.sign($0) }
        let both: [JWSAlgorithm] = [.es256, .rs256]
        XCTAssertNil(refusal(es256, algorithms: both, keys: { $0 == "ec" ? p256 : nil }))
        XCTAssertEqual(refusal(es256, algorithms: both, keys: { _ in Self.key }), .invalidSignature)
        let rs256 = try token(#"{"alg":"RS256","kid":"ec","typ":"at+jwt"}"#)
        XCTAssertEqual(refusal(rs256, algorithms: both, keys: { _ in p256 }), .invalidSignature)
    }

    // MARK: crit (RFC 7515 §4.1.11)

    func testCritOfAnyJSONTypeIsRefused() throws {
        for crit in [#"["exp"]"#, "[]", #""exp""#, "null", "{}", #"{"exp":true}"#, "0", "false"] {
            let token = try token(#"{"alg":"RS256","crit":\#(crit),"kid":"k1","typ":"at+jwt"}"#)
            XCTAssertEqual(refusal(token), .criticalHeader, crit)
        }
    }

    /// The header is decoded once, `crit` with it: parsing records its
    /// presence, and `verify` reads that flag instead of decoding again.
    func testCritIsReadInTheOneHeaderDecode() throws {
        XCTAssertTrue(try CompactJWT(parsing: token(#"{"alg":"RS256","crit":null,"kid":"k1"}"#)).hasCriticalHeader)
        XCTAssertFalse(try CompactJWT(parsing: token(#"{"alg":"RS256","kid":"k1"}"#)).hasCriticalHeader)
    }

    /// alg, then typ, then crit: the order the resource servers document.
    func testStepOrder() throws {
        XCTAssertEqual(refusal(try token(#"{"alg":"HS256","crit":[],"typ":"JWT"}"#)), .unsupportedAlgorithm)
        XCTAssertEqual(refusal(try token(#"{"alg":"RS256","crit":[],"typ":"JWT"}"#)), .wrongType)
        XCTAssertEqual(refusal(try token(#"{"alg":"RS256","crit":[],"typ":"at+jwt"}"#)), .criticalHeader)
        XCTAssertEqual(refusal(try token(#"{"alg":"RS256","typ":"at+jwt"}"#, key: Self.stranger)), .missingKeyID)
        XCTAssertEqual(refusal(try token(#"{"alg":"RS256","kid":"k9","typ":"at+jwt"}"#, key: Self.stranger)), .unknownKey)
    }

    // MARK: typ (RFC 8725 §3.11, RFC 7515 §4.1.9)

    func testTypIsComparedIgnoringCaseWithTheApplicationPrefixWhereAllowed() {
        for accepted in ["at+jwt", "AT+JWT", "At+Jwt", "application/at+jwt", "APPLICATION/AT+JWT"] {
            XCTAssertTrue(Self.accessToken.accepts(accepted), accepted)
        }
        for refused in [nil, "", "JWT", "jwt", "at+jwt ", " at+jwt", "application/jwt", "application/", "application/application/at+jwt",
                        "at+jwt\u{0}", "\u{0130}t+jwt", "dpop+jwt"] as [String?] {
            XCTAssertFalse(Self.accessToken.accepts(refused), String(describing: refused))
        }
        for accepted in [nil, "JWT", "jwt", "Jwt"] as [String?] {
            XCTAssertTrue(Self.idToken.accepts(accepted), String(describing: accepted))
        }
        for refused in ["at+jwt", "logout+jwt", "application/jwt", "", "JWT "] {
            XCTAssertFalse(Self.idToken.accepts(refused), refused)
        }
        XCTAssertFalse(JWTTypes.required(["at+jwt"], allowingApplicationPrefix: false).accepts("application/at+jwt"))
    }

    func testAWrongTypIsRefusedByThePipeline() throws {
        XCTAssertEqual(refusal(try token(#"{"alg":"RS256","kid":"k1","typ":"JWT"}"#)), .wrongType)
        XCTAssertEqual(refusal(try token(#"{"alg":"RS256","kid":"k1"}"#)), .wrongType)
        XCTAssertNil(refusal(try token(#"{"alg":"RS256","kid":"k1"}"#), types: Self.idToken))
        XCTAssertNil(refusal(try token(#"{"alg":"RS256","kid":"k1","typ":"application/AT+JWT"}"#)))
    }

    // MARK: key by kid, signature

    func testUnknownAndMissingKid() throws {
        XCTAssertEqual(refusal(try token(#"{"alg":"RS256","kid":"k2","typ":"at+jwt"}"#)), .unknownKey)
        XCTAssertEqual(refusal(try token(#"{"alg":"RS256","kid":"","typ":"at+jwt"}"#)), .missingKeyID)
        XCTAssertEqual(refusal(try token(#"{"alg":"RS256","typ":"at+jwt"}"#)), .missingKeyID)
    }

    /// RFC 8725 §3.10: a key in the header is never used.
    func testAKeyInTheHeaderIsIgnored() throws {
        let n = Base64URL.encode(try Self.stranger.publicComponents().modulus)
        let header = #"{"alg":"RS256","jku":"https://attacker.example/jwks","jwk":{"kty":"RSA","n":"\#(n)","e":"AQAB"},"kid":"k1","typ":"at+jwt"}"#
        XCTAssertEqual(refusal(try token(header, key: Self.stranger)), .invalidSignature)
    }

    func testABadSignatureIsRefused() throws {
        let good = try token(#"{"alg":"RS256","kid":"k1","typ":"at+jwt"}"#)
        let parts = good.split(separator: ".").map(String.init)
        XCTAssertEqual(refusal(parts[0] + "." + Base64URL.encode(Array(#"{"sub":"mallory","exp":1}"#.utf8)) + "." + parts[2]), .invalidSignature)
        XCTAssertEqual(refusal(parts[0] + "." + parts[1] + "."), .invalidSignature)
        XCTAssertEqual(refusal(try token(#"{"alg":"RS256","kid":"k1","typ":"at+jwt"}"#, key: Self.stranger)), .invalidSignature)
    }

    func testTheKeyLookupsOwnErrorsPassThrough() throws {
        struct Unavailable: Error {}
        let good = try token(#"{"alg":"RS256","kid":"k1","typ":"at+jwt"}"#)
        XCTAssertThrowsError(try CompactJWT(parsing: good).verify(algorithms: Self.rs256, types: Self.accessToken) { _ in throw Unavailable() }) {
            XCTAssertTrue($0 is Unavailable)
        }
    }

    // MARK: time window (RFC 7519 §4.1.4-4.1.6)

    func testTimeWindowEdges() {
        let now = 1_000_000.0
        let strict = JWTTimeWindow(leeway: 0), lenient = JWTTimeWindow(leeway: 60)
        // exp: now must be before it.
        XCTAssertEqual(strict.violation(expiresAt: now, notBefore: nil, issuedAt: nil, now: now), .expired)
        XCTAssertNil(strict.violation(expiresAt: now + 1, notBefore: nil, issuedAt: nil, now: now))
        XCTAssertEqual(lenient.violation(expiresAt: now - 60, notBefore: nil, issuedAt: nil, now: now), .expired)
        XCTAssertNil(lenient.violation(expiresAt: now - 59, notBefore: nil, issuedAt: nil, now: now))
        XCTAssertNil(strict.violation(expiresAt: now + 0.5, notBefore: nil, issuedAt: nil, now: now))
        // nbf: now must be at or after it.
        XCTAssertNil(strict.violation(expiresAt: now + 10, notBefore: now, issuedAt: nil, now: now))
        XCTAssertEqual(strict.violation(expiresAt: now + 10, notBefore: now + 1, issuedAt: nil, now: now), .notYetValid)
        XCTAssertNil(lenient.violation(expiresAt: now + 10, notBefore: now + 60, issuedAt: nil, now: now))
        XCTAssertEqual(lenient.violation(expiresAt: now + 10, notBefore: now + 61, issuedAt: nil, now: now), .notYetValid)
        // iat: not further ahead than the leeway.
        XCTAssertNil(lenient.violation(expiresAt: now + 10, notBefore: nil, issuedAt: now + 60, now: now))
        XCTAssertEqual(lenient.violation(expiresAt: now + 10, notBefore: nil, issuedAt: now + 61, now: now), .issuedInFuture)
        XCTAssertEqual(strict.violation(expiresAt: now + 10, notBefore: nil, issuedAt: now + 1, now: now), .issuedInFuture)
        // exp is reported first.
        XCTAssertEqual(strict.violation(expiresAt: now, notBefore: now + 5, issuedAt: now + 5, now: now), .expired)
    }
}
