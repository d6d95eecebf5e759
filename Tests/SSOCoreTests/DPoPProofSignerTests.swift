import Foundation
@testable import SSOCore
import XCTest

/// The client's side of DPoP (gatehouse-login's proofs), and the worked
/// example docs/API.md gives app developers, checked byte for byte.
final class DPoPProofSignerTests: XCTestCase {
    let now: Int64 = 1_800_000_000

    func testItsProofsPassEveryCheckTheServerMakes() throws {
        let signer = try DPoPProofSigner(key: try ES256PrivateKey.generate())
        let token = try signer.proof(method: "POST", uri: "https://issuer.example/token", nonce: "n-1", now: now)
        let verified = try DPoPProof.verify(token, for: DPoPRequest(method: "POST", uri: "https://issuer.example/token"), now: now)
        XCTAssertEqual(verified.jkt, signer.thumbprint)
        XCTAssertEqual(verified.nonce, "n-1")
        XCTAssertEqual(verified.issuedAt, now)
        // §7: with an access token, ath; htu without the query (§4.2).
        let resource = DPoPRequest(method: "GET", uri: "https://api.example/api/data", accessToken: "the-token")
        let call = try signer.proof(method: "GET", uri: "https://api.example/api/data?page=2#top", accessToken: "the-token", now: now)
        XCTAssertEqual(try DPoPProof.verify(call, for: resource, now: now).jkt, signer.thumbprint)
        let claims = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(Base64URL.decode(call.split(separator: ".")[1])!)) as? [String: Any])
        XCTAssertEqual(claims["htu"] as? String, "https://api.example/api/data")
        XCTAssertEqual(claims["ath"] as? String, DPoPProof.accessTokenHash("the-token"))
        XCTAssertNil(claims["nonce"])
        XCTAssertThrowsError(try DPoPProof.verify(call, for: DPoPRequest(method: "GET", uri: resource.uri, accessToken: "another"), now: now))
    }

    func testEveryProofHasItsOwnJTI() throws {
        let signer = try DPoPProofSigner(key: try ES256PrivateKey.generate())
        let request = DPoPRequest(method: "POST", uri: "https://issuer.example/token")
        let jtis = try (0..<20).map { _ in try DPoPProof.verify(try signer.proof(method: "POST", uri: request.uri, now: now), for: request, now: now).jti }
        XCTAssertEqual(Set(jtis).count, 20)
    }

    /// RFC 9449's own examples: the §4.2 proof key has the §6.1 `cnf.jkt`,
    /// and §7.1's access token has that `ath`.
    func testTheRFCsExamples() throws {
        let jwk = ProofJWK(kty: "EC", crv: "P-256", x: "l8tFrhx-34tV3hRICRDY9zCkDlpBhF42UQUfWVAWBFs",
                           y: "9VE4jf_Ok_o64zbTTlcuNJajHmt6v9TDVrU0CdvGRDA")
        XCTAssertEqual(try DPoPProof.publicKey(jwk, for: .es256).1, "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I")
        XCTAssertEqual(DPoPProof.accessTokenHash("Kz~8mXK1EalYznwH-LC-1fBAo.4Ljp~zsPE_NeO.gxU"), "fUHyO2r2Z3DZ53EsNrWBb0xWXoaNy59IiKCAqksmQEo")
    }

    /// docs/API.md, "DPoP: the exact bytes": the values there were computed
    /// with Python's `cryptography`; this keeps them and the code in step.
    func testTheWorkedExampleInTheAPIDocument() throws {
        let pem = """
            -----BEGIN PRIVATE KEY-----
            MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg7RonJ+aVI+KyP81n
            jk+Rnl0OcvKdeml3/viRThGZfn+hRANCAAQ9jO7o722hZIpKmr80ua/Z1p3V4Vpv
            t/7ahnqj94UIwasH10I+A/s0kZisnTPOnrnTUBx6blPb7+Z5SB4UnsGC
            -----END PRIVATE KEY-----

            """
        let signer = try DPoPProofSigner(key: try ES256PrivateKey.privateKey(pem: Array(pem.utf8)))
        XCTAssertEqual(signer.jwk.x, "PYzu6O9toWSKSpq_NLmv2dad1eFab7f-2oZ6o_eFCME")
        XCTAssertEqual(signer.jwk.y, "qwfXQj4D-zSRmKydM86eudNQHHpuU9vv5nlIHhSewYI")
        let canonical = #"{"crv":"P-256","kty":"EC","x":"PYzu6O9toWSKSpq_NLmv2dad1eFab7f-2oZ6o_eFCME","y":"qwfXQj4D-zSRmKydM86eudNQHHpuU9vv5nlIHhSewYI"}"#
        XCTAssertEqual(SHA256.hash(canonical).map { String(format: "%02x", $0) }.joined(),
                       "dfc6eb493ca6db8521f7171d76b3b538ba2f0494be36812fd4d35bb26b2056dc")
        XCTAssertEqual(signer.thumbprint, "38brSTym24Uh9xcddrO1OLovBJS-NoEv1NNbsmsgVtw")
        let accessToken = "eyJhbGciOiJSUzI1NiIsInR5cCI6ImF0K2p3dCJ9.eyJzdWIiOiJleGFtcGxlIn0.c2lnbmF0dXJl"
        XCTAssertEqual(DPoPProof.accessTokenHash(accessToken), "seo0mRLKhjmf-MRq67X5c4qrID-p3wNbxmOuvAJgcCY")
        // The proof shown there, signed by Python's cryptography: it verifies here.
        let proof = "eyJ0eXAiOiJkcG9wK2p3dCIsImFsZyI6IkVTMjU2IiwiandrIjp7Imt0eSI6IkVDIiwiY3J2IjoiUC0yNTYiLCJ4IjoiUFl6dTZPOXRvV1NLU3BxX05MbXYyZGFkMWVGYWI3Zi0yb1o2b19lRkNNRSIsInkiOiJxd2ZYUWo0RC16U1JtS3lkTTg2ZXVkTlFISHB1VTl2djVubElIaFNld1lJIn19"
            + ".eyJqdGkiOiI0ZjBjMWIyZS1leGFtcGxlIiwiaHRtIjoiR0VUIiwiaHR1IjoiaHR0cHM6Ly9sb2NhbGhvc3Q6ODQ0My91c2VyaW5mbyIsImlhdCI6MTc2NDAwMDAwMCwiYXRoIjoic2VvMG1STEtoam1mLU1ScTY3WDVjNHFySUQtcDN3TmJ4bU91dkFKZ2NDWSJ9"
            + ".QahrUU-lrnz0Ggg9dGtkEAVNKu4_8j_ZoFSWwlaGTcmWwsaShpVgt3UUwLzkYpBE-WAATDhqTw2inl9o97YrFw"
        let verified = try DPoPProof.verify(proof, for: DPoPRequest(method: "GET", uri: "https://localhost:8443/userinfo", accessToken: accessToken),
                                            now: 1_764_000_000)
        XCTAssertEqual(verified.jkt, signer.thumbprint)
        XCTAssertEqual(verified.jti, "4f0c1b2e-example")
    }
}
