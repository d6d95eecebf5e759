import XCTest
@testable import ResourceServer
import SSOCore

final class AccessTokenValidatorTests: XCTestCase {
    let now = TokenFactory.now
    var fetcher: FakeJWKSFetcher!
    var validator: AccessTokenValidator!

    override func setUp() {
        fetcher = FakeJWKSFetcher()
        validator = makeValidator(audience: TokenFactory.apiA, scope: "api:serverA")
    }

    /// Without the verified-token cache: every call runs every check.
    func makeValidator(audience: String, scope: String) -> AccessTokenValidator {
        AccessTokenValidator(policy: AccessTokenPolicy(issuer: TokenFactory.issuer, audience: audience, requiredScope: scope),
                             keys: JWKSCache(fetcher: fetcher, store: nil), verifiedTokenCapacity: 0)
    }

    /// The code a validation fails with, or nil when it succeeds.
    func failure(_ authorization: String?, at time: Int? = nil, file: StaticString = #filePath, line: UInt = #line) -> BearerError.Code? {
        do {
            _ = try validator.validate(authorization: authorization, now: time ?? now)
            return nil
        } catch let error as BearerError {
            return error.code
        } catch {
            XCTFail("unexpected error \(error)", file: file, line: line)
            return nil
        }
    }

    func bearer(_ token: String) -> String { "Bearer " + token }

    // MARK: the good token

    func testIssuerSignedTokenIsAccepted() throws {
        let claims = try validator.validate(authorization: bearer(TokenFactory.issuerToken()), now: now)
        XCTAssertEqual(claims.email, "alice@example.com")
        XCTAssertEqual(claims.subject, "user-123")
        XCTAssertEqual(claims.audience.values, [TokenFactory.apiA, TokenFactory.apiB])
        XCTAssertEqual(claims.roles, ["user"])
        XCTAssertEqual(claims.clientID, "mobile-app-001")
        XCTAssertEqual(fetcher.calls, 1, "the JWKS is fetched on first need")
    }

    func testAudienceAsSingleStringIsAccepted() {
        let token = TokenFactory.token(claims: TokenFactory.changing("aud", to: .string(TokenFactory.apiA)))
        XCTAssertNil(failure(bearer(token)))
    }

    func testSchemeIsCaseInsensitiveAndSpacesMayRepeat() {
        let token = TokenFactory.token()
        XCTAssertNil(failure("bearer " + token))
        XCTAssertNil(failure("BEARER " + token))
        XCTAssertNil(failure("Bearer   " + token))
    }

    func testApplicationAtJWTTypeIsAccepted() {
        XCTAssertNil(failure(bearer(TokenFactory.token(header: TokenFactory.header(typ: "application/at+jwt")))))
        XCTAssertNil(failure(bearer(TokenFactory.token(header: TokenFactory.header(typ: "AT+JWT")))))
    }

    func testOtherResourceServerAcceptsItsOwnAudienceAndScope() {
        validator = makeValidator(audience: TokenFactory.apiB, scope: "api:serverB")
        XCTAssertNil(failure(bearer(TokenFactory.token())))
    }

    // MARK: credentials

    func testMissingEmptyOrOtherSchemeIsMissingToken() {
        XCTAssertEqual(failure(nil), .missingToken)
        XCTAssertEqual(failure(""), .missingToken)
        XCTAssertEqual(failure("   "), .missingToken)
        XCTAssertEqual(failure("Basic bW9iaWxlOnNlY3JldA=="), .missingToken)
        XCTAssertEqual(failure("Token " + TokenFactory.token()), .missingToken)
        XCTAssertEqual(failure("Bearer" + TokenFactory.token()), .missingToken, "no space: not the Bearer scheme")
        XCTAssertEqual(fetcher.calls, 0)
    }

    func testBearerWithoutTokenIsMalformed() {
        XCTAssertEqual(failure("Bearer"), .malformedToken)
        XCTAssertEqual(failure("Bearer "), .malformedToken)
        XCTAssertEqual(failure("Bearer    "), .malformedToken)
    }

    func testGarbageIsMalformed() {
        for garbage in ["abc", "a.b", "a.b.c.d", "....", "e30.e30.", "!!.??.**", "Bearer x y", "=abc", "ab=c",
                        String(repeating: "A", count: 20_000), "eyJhbGciOiJSUzI1NiJ9.%%%.abc", "a\tb",
                        Base64URL.encode(Array("not json".utf8)) + ".e30.c2ln"] {
            XCTAssertEqual(failure(bearer(garbage)), .malformedToken, garbage.prefix(40) + "")
        }
        XCTAssertEqual(fetcher.calls, 0, "nothing is fetched for a token that does not parse")
    }

    // MARK: header

    func testAlgNoneIsRefused() {
        let input = TokenFactory.signingInput(header: TokenFactory.header(alg: "none"), claims: TokenFactory.claims())
        XCTAssertEqual(failure(bearer(input + ".")), .invalidSignature)
        XCTAssertEqual(failure(bearer(input + "." + Base64URL.encode(Array("x".utf8)))), .invalidSignature)
    }

    func testHS256SignedWithThePublicKeyIsRefused() throws {
        // The classic key-confusion attack: HMAC keyed with the RSA public key.
        let publicPEM = try TestKeys.issuer.publicKeyPEM()
        let input = TokenFactory.signingInput(header: TokenFactory.header(alg: "HS256"), claims: TokenFactory.claims())
        let mac = HMACSHA256.authenticate(Array(input.utf8), key: publicPEM)
        XCTAssertEqual(failure(bearer(input + "." + Base64URL.encode(mac))), .invalidSignature)
        let modulusKey = try TestKeys.issuer.publicComponents().modulus
        let mac2 = HMACSHA256.authenticate(Array(input.utf8), key: modulusKey)
        XCTAssertEqual(failure(bearer(input + "." + Base64URL.encode(mac2))), .invalidSignature)
    }

    func testOtherAlgorithmsAreRefused() {
        for alg in ["RS512", "PS256", "ES256", "rs256", ""] {
            XCTAssertEqual(failure(bearer(TokenFactory.token(header: TokenFactory.header(alg: alg)))), .invalidSignature, alg)
        }
    }

    func testWrongOrMissingTypIsMalformed() {
        for typ in ["JWT", "jwt", "at+jwt ", "application/jwt", "id_token+jwt", ""] {
            XCTAssertEqual(failure(bearer(TokenFactory.token(header: TokenFactory.header(typ: typ)))), .malformedToken, typ)
        }
        XCTAssertEqual(failure(bearer(TokenFactory.token(header: TokenFactory.header(typ: nil)))), .malformedToken)
    }

    func testCriticalHeaderIsMalformed() {
        var header = TokenFactory.header()
        header["crit"] = ["exp"]
        XCTAssertEqual(failure(bearer(TokenFactory.token(header: header))), .malformedToken)
        header["crit"] = .array([])
        XCTAssertEqual(failure(bearer(TokenFactory.token(header: header))), .malformedToken)
        // RFC 7515 §4.1.11 asks for an array, but a member of another JSON
        // type, null included, is no less a critical extension claimed.
        for value: JSONValue in [.null, "exp", .object([:]), 0] {
            header["crit"] = value
            XCTAssertEqual(failure(bearer(TokenFactory.token(header: header))), .malformedToken, "\(value)")
        }
    }

    func testKeyURLHeadersAreIgnored() {
        // A jku/jwk in the header never supplies the key (RFC 8725 §3.10):
        // a token signed by a stranger that points at its own key still fails.
        var header = TokenFactory.header()
        header["jku"] = "https://attacker.example/jwks.json"
        header["jwk"] = .object(["kty": "RSA", "n": .string(TestKeys.jwk(TestKeys.stranger, kid: "x").n ?? ""), "e": "AQAB"])
        XCTAssertEqual(failure(bearer(TokenFactory.token(header: header, key: TestKeys.stranger))), .invalidSignature)
    }

    // MARK: key and signature

    func testUnknownKidIsRefetchedOnceThenRefused() {
        let token = TokenFactory.token(header: TokenFactory.header(kid: "no-such-key"))
        XCTAssertEqual(failure(bearer(TokenFactory.token())), nil)
        XCTAssertEqual(fetcher.calls, 1)
        XCTAssertEqual(failure(bearer(token), at: now + 1), .unknownSigningKey)
        XCTAssertEqual(fetcher.calls, 2, "an unknown kid triggers one refetch")
        XCTAssertEqual(failure(bearer(token), at: now + 2), .unknownSigningKey)
        XCTAssertEqual(failure(bearer(token), at: now + 29), .unknownSigningKey)
        XCTAssertEqual(fetcher.calls, 2, "at most one refetch per 30 s")
        XCTAssertEqual(failure(bearer(token), at: now + 31), .unknownSigningKey)
        XCTAssertEqual(fetcher.calls, 3)
    }

    func testRotatedKeyIsFoundByRefetch() {
        XCTAssertNil(failure(bearer(TokenFactory.token())))
        fetcher.result = .success(TestKeys.rotatedSet)
        let rotated = TokenFactory.token(header: TokenFactory.header(kid: TestKeys.rotatedKID), key: TestKeys.rotated)
        XCTAssertNil(failure(bearer(rotated), at: now + 5))
        XCTAssertEqual(fetcher.calls, 2)
    }

    func testMissingKidIsUnknownSigningKey() {
        XCTAssertEqual(failure(bearer(TokenFactory.token(header: TokenFactory.header(kid: nil)))), .unknownSigningKey)
        XCTAssertEqual(failure(bearer(TokenFactory.token(header: TokenFactory.header(kid: "")))), .unknownSigningKey)
    }

    func testSignatureByAnotherKeyOrTamperingIsRefused() {
        XCTAssertEqual(failure(bearer(TokenFactory.token(key: TestKeys.stranger))), .invalidSignature)
        let good = TokenFactory.token()
        let parts = good.split(separator: ".").map(String.init)
        let forgedClaims = Base64URL.encode(try! JSON.encode(TokenFactory.changing("email", to: "mallory@example.com")))
        XCTAssertEqual(failure(bearer([parts[0], forgedClaims, parts[2]].joined(separator: "."))), .invalidSignature)
        XCTAssertEqual(failure(bearer(parts[0] + "." + parts[1] + ".")), .invalidSignature, "empty signature")
        let shortened = Base64URL.encode(Base64URL.decode(parts[2])!.dropLast(3))
        XCTAssertEqual(failure(bearer(parts[0] + "." + parts[1] + "." + shortened)), .invalidSignature, "truncated signature")
    }

    // MARK: claims

    func testWrongIssuerIsRefused() {
        for issuer: JSONValue in ["https://evil.example", "https://localhost:8443/", "http://localhost:8443", "HTTPS://localhost:8443"] {
            XCTAssertEqual(failure(bearer(TokenFactory.token(claims: TokenFactory.changing("iss", to: issuer)))), .invalidIssuer)
        }
    }

    func testExpiryWithLeeway() {
        let token = TokenFactory.token(claims: TokenFactory.claims(now: now, lifetime: 900))
        XCTAssertNil(failure(bearer(token), at: now + 900), "within the 60 s leeway")
        XCTAssertNil(failure(bearer(token), at: now + 959))
        XCTAssertEqual(failure(bearer(token), at: now + 960), .tokenExpired)
        XCTAssertEqual(failure(bearer(token), at: now + 100_000), .tokenExpired)
    }

    func testNotBeforeInTheFutureIsRefused() {
        let early = TokenFactory.changing("nbf", to: .integer(now + 61))
        XCTAssertEqual(failure(bearer(TokenFactory.token(claims: early))), .tokenExpired)
        XCTAssertNil(failure(bearer(TokenFactory.token(claims: TokenFactory.changing("nbf", to: .integer(now + 60))))))
        XCTAssertNil(failure(bearer(TokenFactory.token(claims: TokenFactory.changing("nbf", to: nil)))), "nbf is optional")
    }

    func testIssuedInTheFutureIsRefused() {
        var claims = TokenFactory.claims(now: now + 3600)
        claims["nbf"] = .integer(now)
        XCTAssertEqual(failure(bearer(TokenFactory.token(claims: claims))), .tokenExpired)
    }

    func testWrongAudienceIsRefused() {
        for audience: JSONValue in [.string(TokenFactory.apiB), [.string(TokenFactory.apiB)], [], "https://localhost:8444/",
                                    [.string(TokenFactory.issuer)]] {
            XCTAssertEqual(failure(bearer(TokenFactory.token(claims: TokenFactory.changing("aud", to: audience)))), .invalidAudience)
        }
    }

    func testMissingScopeIsInsufficient() {
        for scope: JSONValue in ["openid email api:serverB", "", "api:serverAB", "API:SERVERA", "api:server"] {
            XCTAssertEqual(failure(bearer(TokenFactory.token(claims: TokenFactory.changing("scope", to: scope)))), .insufficientScope)
        }
        XCTAssertEqual(failure(bearer(TokenFactory.token(claims: TokenFactory.changing("scope", to: nil)))), .insufficientScope)
        XCTAssertNil(failure(bearer(TokenFactory.token(claims: TokenFactory.changing("scope", to: "api:serverA")))))
    }

    func testMissingOrMistypedRequiredClaimsAreMalformed() {
        for name in ["iss", "sub", "aud", "exp", "iat"] {
            XCTAssertEqual(failure(bearer(TokenFactory.token(claims: TokenFactory.changing(name, to: nil)))), .malformedToken, name)
        }
        XCTAssertEqual(failure(bearer(TokenFactory.token(claims: TokenFactory.changing("exp", to: "tomorrow")))), .malformedToken)
        XCTAssertEqual(failure(bearer(TokenFactory.token(claims: TokenFactory.changing("aud", to: .integer(1))))), .malformedToken)
        XCTAssertEqual(failure(bearer(TokenFactory.token(claims: TokenFactory.changing("scope", to: ["api:serverA"])))), .malformedToken)
        XCTAssertNil(failure(bearer(TokenFactory.token(claims: TokenFactory.changing("exp", to: .number(Double(now) + 100.5))))),
                     "NumericDate may be fractional")
    }

    func testPayloadThatIsNotAnObjectIsMalformed() {
        let header = Base64URL.encode(try! JSON.encode(TokenFactory.header()))
        for payload in ["[]", "\"text\"", "null", "not json"] {
            let input = header + "." + Base64URL.encode(Array(payload.utf8))
            let token = input + "." + Base64URL.encode(try! TestKeys.issuer.signRS256(Array(input.utf8)))
            XCTAssertEqual(failure(bearer(token)), .malformedToken, payload)
        }
    }

    // MARK: order

    func testChecksRunInTheFixedOrder() {
        // A forged signature is reported before any claim problem.
        let expiredWrongIssuer = TokenFactory.changing("iss", to: "https://evil.example", in: TokenFactory.claims(now: now - 10_000))
        XCTAssertEqual(failure(bearer(TokenFactory.token(claims: expiredWrongIssuer, key: TestKeys.stranger))), .invalidSignature)
        // Then the issuer before the time window.
        XCTAssertEqual(failure(bearer(TokenFactory.token(claims: expiredWrongIssuer))), .invalidIssuer)
        // Then the time window before the audience.
        let expiredOtherAudience = TokenFactory.changing("aud", to: "https://other.example", in: TokenFactory.claims(now: now - 10_000))
        XCTAssertEqual(failure(bearer(TokenFactory.token(claims: expiredOtherAudience))), .tokenExpired)
        // Then the audience before the scope.
        let noScopeOtherAudience = TokenFactory.changing("scope", to: "openid", in: TokenFactory.changing("aud", to: "https://other.example"))
        XCTAssertEqual(failure(bearer(TokenFactory.token(claims: noScopeOtherAudience))), .invalidAudience)
        // The typ is checked before the key is looked up: no refetch for it.
        let fetchesBefore = fetcher.calls
        XCTAssertEqual(failure(bearer(TokenFactory.token(header: TokenFactory.header(kid: "unknown", typ: "JWT")))), .malformedToken)
        XCTAssertEqual(fetcher.calls, fetchesBefore)
    }

    func testNoKeySetEverIsUnavailableNotUnauthorized() {
        fetcher.result = FakeJWKSFetcher.unreachable
        XCTAssertThrowsError(try validator.validate(authorization: bearer(TokenFactory.token()), now: now)) { error in
            XCTAssertEqual((error as? SigningKeysUnavailableError)?.retryAfter, 5)
        }
        // A request without a token is still told what it lacks.
        XCTAssertEqual(failure(nil), .missingToken)
    }
}
