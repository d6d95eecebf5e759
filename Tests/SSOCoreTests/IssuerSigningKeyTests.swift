import Foundation
import XCTest
@testable import SSOCore

/// The issuer's three signing algorithms against the RFCs' own examples:
/// RFC 8037 Appendix A (Ed25519: the public key from the seed, the JWK
/// thumbprint, the exact signature), RFC 7515 Appendix A.3 (an ES256 JWS
/// verified with the JWK it gives) and RFC 7638 §3.1 (an RSA thumbprint);
/// then each algorithm round trip: generate, PEM, JWK, sign, verify.
final class IssuerSigningKeyTests: XCTestCase {
    // RFC 8037 A.1.
    static let ed25519Seed = "nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A"
    static let ed25519X = "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"

    func testRFC8037Ed25519PublicKeyThumbprintAndSignature() throws {
        let key = try Ed25519PrivateKey.privateKey(seed: try XCTUnwrap(Base64URL.decode(Self.ed25519Seed)))
        XCTAssertEqual(Base64URL.encode(try key.publicKeyBytes()), Self.ed25519X, "A.2: the public key from the seed")
        let signing = IssuerSigningKey.edDSA(key)
        let jwk = try IssuerPublicKey.jwk(pem: try signing.publicKeyPEM(), algorithm: .edDSA, kid: "")
        XCTAssertEqual(jwk.kty, "OKP")
        XCTAssertEqual(jwk.crv, "Ed25519")
        XCTAssertEqual(jwk.x, Self.ed25519X)
        // A.3: "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k".
        XCTAssertEqual(try signing.thumbprint(), "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k")
        // A.4: Ed25519 is deterministic, so the signature is the RFC's, byte for byte.
        let input = "eyJhbGciOiJFZERTQSJ9.RXhhbXBsZSBvZiBFZDI1NTE5IHNpZ25pbmc"
        let signature = try signing.sign(Array(input.utf8))
        XCTAssertEqual(Base64URL.encode(signature),
                       "hgyY0il_MGCjP0JzlnLWG1PPOt7-09PGcvMg3AIbQR6dWbhijcNR4ki4iylGjg5BhVsPt9g7sVvpAr_MuM0KAg")
        // A.5: and it verifies with the public JWK alone, only over that input.
        let verifier = try XCTUnwrap(jwk.verificationKey())
        XCTAssertEqual(verifier.algorithm, .edDSA)
        XCTAssertTrue(verifier.verify(signature: signature, message: Array(input.utf8)))
        XCTAssertFalse(verifier.verify(signature: signature, message: Array((input + "x").utf8)))
    }

    func testRFC7515AppendixA3ES256VerifiesWithItsJWK() throws {
        let jwk = JWK(kty: "EC", alg: nil, kid: "a3", crv: "P-256", x: "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
                      y: "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0")
        let token = "eyJhbGciOiJFUzI1NiJ9"
            + ".eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ"
            + ".DtEhU3ljbEg8L38VWAfUAqOyKAM6-Xx-F4GawxaepmXFCgfTjDxw5djxLa8ISlSApmWQxfKTUJqPP3-Kg6NU1Q"
        let parts = token.split(separator: ".").map(String.init)
        let verifier = try XCTUnwrap(jwk.verificationKey())
        XCTAssertEqual(verifier.algorithm, .es256)
        let signature = try XCTUnwrap(Base64URL.decode(parts[2]))
        XCTAssertTrue(verifier.verify(signature: signature, message: Array((parts[0] + "." + parts[1]).utf8)))
        var flipped = signature
        flipped[10] ^= 1
        XCTAssertFalse(verifier.verify(signature: flipped, message: Array((parts[0] + "." + parts[1]).utf8)))
        // The same key claimed for another algorithm verifies nothing.
        var mislabelled = jwk
        mislabelled.alg = "RS256"
        XCTAssertNil(mislabelled.verificationKey())
    }

    func testRFC7638RSAThumbprint() throws {
        let jwk = JWK(kty: "RSA", alg: "RS256", kid: nil, n: """
            0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64t\
            Z_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbI\
            SD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw
            """, e: "AQAB")
        XCTAssertEqual(try IssuerPublicKey.thumbprint(of: jwk), "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs")
    }

    func testEachAlgorithmRoundTripsThroughPEMAndTheJWKS() throws {
        for algorithm in IssuerSigningKey.algorithms {
            let key = try IssuerSigningKey.generate(algorithm)
            XCTAssertEqual(key.algorithm, algorithm)
            let reloaded = try IssuerSigningKey.load(pem: try key.privateKeyPEM(), algorithm: algorithm)
            XCTAssertEqual(try reloaded.thumbprint(), try key.thumbprint(), "\(algorithm)")
            let kid = try key.thumbprint()
            let jwk = try IssuerPublicKey.jwk(pem: try key.publicKeyPEM(), algorithm: algorithm, kid: kid)
            XCTAssertEqual(jwk.alg, algorithm.rawValue)
            XCTAssertEqual(jwk.use, "sig")
            XCTAssertEqual(try IssuerPublicKey.thumbprint(of: jwk), kid, "the kid is the published JWK's thumbprint")
            struct Claims: Codable, Equatable { let sub: String }
            let token = try JWTSigner.sign(Claims(sub: "alice"), kid: kid, typ: "JWT", key: reloaded)
            let verified = try CompactJWT(parsing: token).verify(algorithms: IssuerSigningKey.algorithms,
                                                                  types: .required(["JWT"], allowingApplicationPrefix: false)) {
                $0 == kid ? jwk.verificationKey() : nil
            }
            XCTAssertEqual(verified.algorithm, algorithm)
            XCTAssertEqual(try verified.claims(as: Claims.self), Claims(sub: "alice"))
            XCTAssertEqual(try IssuerPublicKey.verificationKey(pem: try key.publicKeyPEM(), algorithm: algorithm).algorithm, algorithm)
            // A key of one algorithm is not loaded as another's.
            for other in IssuerSigningKey.algorithms where other != algorithm {
                XCTAssertThrowsError(try IssuerSigningKey.load(pem: try key.privateKeyPEM(), algorithm: other), "\(algorithm) as \(other)")
            }
        }
        XCTAssertThrowsError(try IssuerSigningKey.generate(.ps256), "the issuer does not sign PS256")
    }

    /// ES256 tokens are about a third the size of RS256's: the signature is
    /// 64 bytes instead of 256.
    func testES256SignaturesAreAQuarterOfRS256s() throws {
        let message = Array("x.y".utf8)
        XCTAssertEqual(try IssuerSigningKey.generate(.es256).sign(message).count, 64)
        XCTAssertEqual(try IssuerSigningKey.generate(.edDSA).sign(message).count, 64)
        XCTAssertEqual(try IssuerSigningKey.generate(.rs256).sign(message).count, 256)
    }
}
