import Foundation
import XCTest
@testable import ResourceServer
import SSOCore

/// A token verified once is not verified again, yet never outlives its
/// validity window or the key that signed it.
final class VerifiedTokenCacheTests: XCTestCase {
    let now = TokenFactory.now
    var fetcher: FakeJWKSFetcher!
    var validator: AccessTokenValidator!

    override func setUp() {
        fetcher = FakeJWKSFetcher()
        validator = AccessTokenValidator(
            policy: AccessTokenPolicy(issuer: TokenFactory.issuer, audience: TokenFactory.apiA, requiredScope: "api:serverA"),
            keys: JWKSCache(fetcher: fetcher, store: nil))
    }

    func code(_ token: String, at time: Int) -> BearerError.Code? {
        do { _ = try validator.validate(authorization: "Bearer " + token, now: time); return nil } catch {
            return (error as? BearerError)?.code
        }
    }

    func testOnlyVerifiedTokensAreRemembered() {
        XCTAssertNil(code(TokenFactory.token(), at: now))
        XCTAssertNil(code(TokenFactory.token(), at: now + 1))
        XCTAssertEqual(validator.verifiedTokens.count, 1)
        XCTAssertEqual(code(TokenFactory.token(key: TestKeys.stranger), at: now), .invalidSignature)
        XCTAssertEqual(code(TokenFactory.token(claims: TokenFactory.changing("scope", to: "openid")), at: now), .insufficientScope)
        XCTAssertEqual(validator.verifiedTokens.count, 1, "refused tokens are never remembered")
    }

    func testRememberedTokenStillExpires() {
        let token = TokenFactory.token(claims: TokenFactory.claims(now: now, lifetime: 900))
        XCTAssertNil(code(token, at: now))
        XCTAssertNil(code(token, at: now + 959))
        XCTAssertEqual(code(token, at: now + 960), .tokenExpired)
        XCTAssertEqual(validator.verifiedTokens.count, 0)
    }

    func testRememberedTokenDiesWithItsKey() {
        let token = TokenFactory.token()
        XCTAssertNil(code(token, at: now))
        // An hour later the refreshed JWKS no longer publishes the key (retired).
        fetcher.result = .success(JWKSet(keys: [TestKeys.jwk(TestKeys.rotated, kid: TestKeys.rotatedKID)]))
        XCTAssertEqual(code(token, at: now + 3600), .unknownSigningKey)
        XCTAssertEqual(validator.verifiedTokens.count, 0)
    }

    func testANewKeySetMeansVerifyingAgain() {
        let token = TokenFactory.token()
        XCTAssertNil(code(token, at: now))
        // The issuer now publishes a different key under the same kid: the
        // remembered verification no longer counts.
        fetcher.result = .success(JWKSet(keys: [TestKeys.jwk(TestKeys.stranger, kid: TestKeys.issuerKID)]))
        XCTAssertEqual(code(token, at: now + 3600), .invalidSignature)
    }

    func testCapacityBoundsTheCache() {
        let small = VerifiedTokenCache(capacity: 2)
        let claims = try! JSON.decoder.decode(AccessTokenClaims.self, from: Data(try! JSON.encode(TokenFactory.claims())))
        for index in 0..<5 { small.insert(.init(claims: claims, kid: "k", keySetGeneration: 1), for: "token-\(index)") }
        XCTAssertLessThanOrEqual(small.count, 2)
        let off = VerifiedTokenCache(capacity: 0)
        off.insert(.init(claims: claims, kid: "k", keySetGeneration: 1), for: "t")
        XCTAssertEqual(off.count, 0)
    }

    /// The key hashes only a token's length and tail, but a hit needs every
    /// byte: a token that differs anywhere, with the same length and tail,
    /// is not the remembered one.
    func testAHitNeedsTheWholeTextByteForByte() {
        let cache = VerifiedTokenCache(capacity: 8)
        let claims = try! JSON.decoder.decode(AccessTokenClaims.self, from: Data(try! JSON.encode(TokenFactory.claims())))
        let token = TokenFactory.token()
        cache.insert(.init(claims: claims, kid: "k", keySetGeneration: 1), for: token)
        XCTAssertTrue(cache.contains(token))
        var middle = Array(token.utf8)
        middle[10] = middle[10] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        XCTAssertFalse(cache.contains(String(decoding: middle, as: UTF8.self)))
        XCTAssertFalse(cache.contains(token + "="), "a longer text is another token")
        XCTAssertFalse(cache.contains(String(token.dropFirst())), "a shorter text is another token")
        XCTAssertNil(cache.entry(for: token.uppercased()))
        XCTAssertNotNil(cache.entry(for: String(decoding: Array(token.utf8), as: UTF8.self)), "an equal copy is a hit")
    }

    /// The b64token scan is skipped only for a text the cache holds; every
    /// other token is scanned, a remembered token's near-twin included.
    func testTheSyntaxScanIsSkippedOnlyForARememberedText() {
        let token = TokenFactory.token()
        XCTAssertNil(code(token, at: now))
        let remembered = validator.verifiedTokens.contains
        XCTAssertEqual(AccessTokenCredentials.extract(fromAuthorization: "Bearer " + token, isVerified: remembered), .token(.bearer, token))
        let twin = String(token.dropLast()) + "!"
        guard case .malformed(.bearer, _) = AccessTokenCredentials.extract(fromAuthorization: "Bearer " + twin, isVerified: remembered) else {
            return XCTFail("a token with a character outside b64token must be malformed")
        }
        XCTAssertEqual(code(token, at: now + 1), nil)
    }
}
