import Foundation
import XCTest
@testable import AuthServer
import SSOCore

/// `ProviderKeys`: an upstream provider's JWK Set as the issuer reads and
/// caches it, against a fake fetcher that counts every request and a clock
/// the test moves.
final class ProviderKeysTests: XCTestCase {
    typealias F = UpstreamFixture
    let clock = TestClock()
    let http = FakeProviderHTTP()
    lazy var keys = ProviderKeys(http: http, clock: clock.clock)
    let jwksURI = F.endpoints.jwks

    func publish(_ members: [[String: Any]]) throws { http.documents[jwksURI] = (200, try F.jwks(members)) }

    /// The key `kid` names, verifying a signature by `signer` over a message.
    func assertVerifies(_ kid: String, _ signer: F.Signer, file: StaticString = #filePath, line: UInt = #line) throws {
        let key = try XCTUnwrap(try keys.key(jwksURI: jwksURI, kid: kid), "no key \(kid)", file: file, line: line)
        let message = Array("signing input".utf8)
        switch signer {
        case .rs256(let rsa):
            XCTAssertEqual(key.algorithm, .rs256, file: file, line: line)
            XCTAssertTrue(key.verify(signature: try rsa.signRS256(message), message: message), file: file, line: line)
        case .es256(let ec):
            XCTAssertEqual(key.algorithm, .es256, file: file, line: line)
            XCTAssertTrue(key.verify(signature: try ec.sign(message), message: message), file: file, line: line)
        default: XCTFail("not a signing key", file: file, line: line)
        }
    }

    // MARK: Reading a JWK Set

    // RFC 7517 §5: "The JWK Set ... is a JSON object ... "keys": The value of
    // the "keys" parameter is an array of JWK values."
    func testRSAAndP256KeysAreRead() throws {
        http.documents[jwksURI] = (200, try F.standardJWKS())
        try assertVerifies(F.rsaKID, .rs256(F.rsa))
        try assertVerifies(F.ecKID, .es256(F.p256))
        XCTAssertEqual(http.gets, [jwksURI], "one fetch for both keys")
        // Without `use` and `alg` (both optional, RFC 7517 §4.2, §4.4).
        XCTAssertEqual(Set(try ProviderKeys.parse(F.jwks([F.rsaJWK(), F.ecJWK()])).keys), [F.rsaKID, F.ecKID])
    }

    // RFC 7517 §4.2: "use" ... "sig" (signature) / "enc" (encryption); §4.4
    // "alg": "The "alg" (algorithm) parameter identifies the algorithm
    // intended for use with the key"; §5: "Implementations SHOULD ignore JWKs
    // within a JWK Set that use "kty" (key type) values that are not
    // understood by them".
    func testMembersThatCannotSignIDTokensAreSkipped() throws {
        let other = try ES256PrivateKey.generate()
        let (n, _) = try F.rsa.publicComponents()
        let members: [[String: Any]] = [
            try F.rsaJWK(kid: "enc", extra: ["use": "enc"]),
            try F.ecJWK(kid: "ec-enc", extra: ["use": "enc", "alg": "ECDH-ES"]),
            try F.rsaJWK(kid: nil),
            try F.rsaJWK(kid: ""),
            try F.rsaJWK(kid: "ps256", extra: ["alg": "PS256"]),
            try F.rsaJWK(kid: "rs512", extra: ["alg": "RS512"]),
            try F.rsaJWK(kid: "rsa-says-es256", extra: ["alg": "ES256"]),
            try F.ecJWK(kid: "ec-says-rs256", extra: ["alg": "RS256"]),
            try F.ecJWK(kid: "p384", extra: ["crv": "P-384"]),
            try F.ecJWK(kid: "no-crv", extra: ["crv": NSNull()]),
            ["kty": "oct", "kid": "hmac", "k": Base64URL.encode(n)],
            ["kty": "OKP", "crv": "Ed25519", "kid": "ed", "x": Base64URL.encode([UInt8](repeating: 1, count: 32))],
            ["kid": "no-kty", "n": Base64URL.encode(n), "e": "AQAB"],
            try F.rsaJWK(kid: "padded-n", extra: ["n": Base64URL.encode(n) + "=="]),
            try F.rsaJWK(kid: "no-e", extra: ["e": NSNull()]),
            try F.ecJWK(kid: "off-curve", extra: ["y": try other.publicJWK().y!]),
            try F.rsaJWK(kid: "good-rsa", extra: ["use": "sig", "alg": "RS256"]),
            try F.ecJWK(kid: "good-ec", extra: ["use": "sig", "alg": "ES256", "key_ops": ["verify"]]),
        ]
        XCTAssertEqual(Set(try ProviderKeys.parse(F.jwks(members)).keys), ["good-rsa", "good-ec"])
        try publish(members)
        XCTAssertNil(try keys.key(jwksURI: jwksURI, kid: "enc"), "an encryption key is not found by its kid")
        try assertVerifies("good-rsa", .rs256(F.rsa))
    }

    func testABodyThatIsNotAJWKSetIsAnError() {
        for body in ["", "<html>", "[]", #"{"keys": {}}"#, #"{"key": []}"#, #"{"keys": [1]}"#] {
            XCTAssertThrowsError(try ProviderKeys.parse(Array(body.utf8)), body)
        }
        XCTAssertEqual(try ProviderKeys.parse(Array(#"{"keys": []}"#.utf8)).count, 0, "an empty set is a set")
    }

    // MARK: When the set is fetched again

    // OIDC Core §10.1.1: "the signer can begin using a new key at its
    // discretion and signals the change to the verifier using the kid value.
    // The verifier knows to go back to the jwks_uri location to re-retrieve
    // the keys when it sees an unfamiliar kid value." At most once every
    // ten seconds, so a forged kid cannot turn callbacks into requests.
    func testAnUnknownKidRefetchesAtMostOnceEveryTenSeconds() throws {
        XCTAssertEqual(ProviderKeys.unknownKeyRefetchInterval, 10)
        try publish([F.rsaJWK()])
        try assertVerifies(F.rsaKID, .rs256(F.rsa))
        XCTAssertEqual(http.gets.count, 1)
        XCTAssertNil(try keys.key(jwksURI: jwksURI, kid: "forged"))
        clock.advance(9)
        for _ in 0..<5 { XCTAssertNil(try keys.key(jwksURI: jwksURI, kid: "forged-\(UUID())")) }
        XCTAssertEqual(http.gets.count, 1, "no refetch within ten seconds of the last")
        clock.advance(1)
        XCTAssertNil(try keys.key(jwksURI: jwksURI, kid: "forged"))
        XCTAssertEqual(http.gets.count, 2, "ten seconds on: one refetch")
        XCTAssertNil(try keys.key(jwksURI: jwksURI, kid: "forged"))
        XCTAssertEqual(http.gets.count, 2)
        // A known kid never waits for, nor causes, a fetch.
        try assertVerifies(F.rsaKID, .rs256(F.rsa))
        XCTAssertEqual(http.gets.count, 2)

        // The provider rotates in a P-256 key: found on the first refetch allowed.
        try publish([F.rsaJWK(), F.ecJWK()])
        clock.advance(5)
        XCTAssertNil(try keys.key(jwksURI: jwksURI, kid: F.ecKID), "five seconds after the last refetch: not yet")
        clock.advance(5)
        try assertVerifies(F.ecKID, .es256(F.p256))
        XCTAssertEqual(http.gets.count, 3)

        // The interval is per JWK Set: another provider's fetches independently.
        let other = "https://other.example/jwks"
        http.documents[other] = (200, try F.jwks([F.ecJWK(kid: "o")]))
        XCTAssertNotNil(try keys.key(jwksURI: other, kid: "o"))
        XCTAssertNil(try keys.key(jwksURI: other, kid: F.rsaKID), "the first set's key is not the second's")
        XCTAssertEqual(http.gets, [jwksURI, jwksURI, jwksURI, other])
    }

    func testASetOlderThanAnHourIsFetchedAgain() throws {
        XCTAssertEqual(ProviderKeys.maximumAge, 3_600)
        try publish([F.rsaJWK(), F.ecJWK()])
        try assertVerifies(F.rsaKID, .rs256(F.rsa))
        clock.advance(3_599)
        try assertVerifies(F.rsaKID, .rs256(F.rsa))
        XCTAssertEqual(http.gets.count, 1, "59:59 old: the held set")
        // The provider withdrew its RSA key: an hour on, it is gone here too.
        try publish([F.ecJWK()])
        clock.advance(1)
        XCTAssertNil(try keys.key(jwksURI: jwksURI, kid: F.rsaKID), "an hour old: fetched again, and the key withdrawn")
        XCTAssertEqual(http.gets.count, 2)
        try assertVerifies(F.ecKID, .es256(F.p256))
        XCTAssertEqual(http.gets.count, 2, "the new set is fresh")
    }

    func testAFailedRefetchKeepsTheKeysHeld() throws {
        try publish([F.rsaJWK()])
        try assertVerifies(F.rsaKID, .rs256(F.rsa))
        let failures: [(String, () -> Void)] = [
            ("unreachable", { self.http.unreachable = true }),
            ("500", { self.http.unreachable = false; self.http.documents[self.jwksURI] = (500, []) }),
            ("not a JWK Set", { self.http.documents[self.jwksURI] = (200, Array("<html>".utf8)) }),
        ]
        for (count, (what, fail)) in failures.enumerated() {
            fail()
            clock.advance(ProviderKeys.maximumAge)
            try assertVerifies(F.rsaKID, .rs256(F.rsa))
            XCTAssertEqual(http.gets.count, count + 2, "\(what): the stale set was fetched again")
            XCTAssertNil(try keys.key(jwksURI: jwksURI, kid: "forged"), "\(what): an unknown kid is nil, not an error")
            XCTAssertEqual(http.gets.count, count + 2, "\(what): and waits ten seconds like any refetch")
        }
        // Once the provider answers again, its set is read.
        try publish([F.ecJWK()])
        clock.advance(ProviderKeys.unknownKeyRefetchInterval)
        try assertVerifies(F.ecKID, .es256(F.p256))
        XCTAssertNil(try keys.key(jwksURI: jwksURI, kid: F.rsaKID))
    }

    func testWithNoSetHeldAFailureThrows() throws {
        http.unreachable = true
        XCTAssertThrowsError(try keys.key(jwksURI: jwksURI, kid: F.rsaKID)) {
            XCTAssertTrue("\($0)".contains("could not be read"), "\($0)")
        }
        http.unreachable = false
        clock.advance(ProviderKeys.unknownKeyRefetchInterval)
        XCTAssertThrowsError(try keys.key(jwksURI: jwksURI, kid: F.rsaKID), "404") { XCTAssertTrue("\($0)".contains("answered 404"), "\($0)") }
        http.documents[jwksURI] = (200, Array(#"{"keys": "none"}"#.utf8))
        clock.advance(ProviderKeys.unknownKeyRefetchInterval)
        XCTAssertThrowsError(try keys.key(jwksURI: jwksURI, kid: F.rsaKID), "not a JWK Set") {
            XCTAssertTrue("\($0)".contains("not a JWK Set"), "\($0)")
        }
        // The first answer that is a set is used.
        try publish([F.rsaJWK()])
        clock.advance(ProviderKeys.unknownKeyRefetchInterval)
        try assertVerifies(F.rsaKID, .rs256(F.rsa))
    }
}
