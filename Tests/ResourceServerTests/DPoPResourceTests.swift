import Foundation
import XCTest
@testable import ResourceServer
import SQLiteClient
@testable import SSOCore

/// api-a and api-b with DPoP-bound tokens (RFC 9449 §7, §9, §11.1), in
/// process, with the replay cache in a real SQLite file: exact statuses,
/// challenges and bodies.
final class DPoPResourceTests: XCTestCase {
    var directory: TemporaryDirectory!
    var config: GatehouseConfig!
    var keys: JWKSCache!
    var serverA: ProtectedAPIResponder!
    var serverB: ProtectedAPIResponder!
    var now = TokenFactory.now
    let phone = ProofMaker()
    let realmA = "https://localhost:8444"
    let algs = "algs=\"ES256 EdDSA RS256\""

    override func setUpWithError() throws {
        directory = try TemporaryDirectory()
        config = GatehouseConfig.test(home: directory.path)
        keys = JWKSCache(fetcher: FakeJWKSFetcher(), store: nil)
        serverA = try makeServerA()
        let database = try SQLiteDatabase(path: config.resourceServerDatabasePath)
        let policyB = ServerB.policy(config: config)
        serverB = ServerB.responder(policy: policyB, keys: keys, store: try ServerBRecordStore(database: database),
                                    dpop: try ResourceServerSetup.dpopGuard(config: config, policy: policyB, path: ServerB.path),
                                    clock: { [unowned self] in now })
    }

    override func tearDown() { directory.remove() }

    /// Another api-a process: its own connections to the same files.
    func makeServerA(nonces: Bool = false) throws -> ProtectedAPIResponder {
        var config = self.config!
        config.apiDPoPNonces = nonces
        let policy = ServerA.policy(config: config)
        return ServerA.responder(policy: policy, keys: keys,
                                 store: try ServerAItemStore(database: SQLiteDatabase(path: config.resourceServerDatabasePath)),
                                 dpop: try ResourceServerSetup.dpopGuard(config: config, policy: policy, path: ServerA.path),
                                 clock: { [unowned self] in now })
    }

    func get(_ responder: ProtectedAPIResponder, authorization: String?, dpop: String? = nil, method: String = "GET") -> Response {
        var headers: [String: String] = [:]
        if let authorization { headers["authorization"] = authorization }
        if let dpop { headers["dpop"] = dpop }
        return ResponderOutcome.run(responder, Request(method: method, path: responder.path, headers: headers)).0
    }

    func challenges(_ response: Response) -> [String] { response.headers.filter { $0.name == "WWW-Authenticate" }.map(\.value) }

    func assertRefused(_ response: Response, status: Int = 401, error: String, description: String, challenge: String,
                       file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(response.status, status, file: file, line: line)
        XCTAssertEqual(response.header("Content-Type"), "application/json", file: file, line: line)
        XCTAssertEqual(response.header("Cache-Control"), "no-store", file: file, line: line)
        XCTAssertEqual(challenges(response), [challenge], file: file, line: line)
        XCTAssertEqual(String(decoding: response.body, as: UTF8.self),
                       "{\"error\":\"\(error)\",\"error_description\":\"\(description)\"}", file: file, line: line)
    }

    func proofChallenge(_ description: String, error: String = "invalid_dpop_proof") -> String {
        "DPoP realm=\"\(realmA)\", error=\"\(error)\", error_description=\"\(description)\", \(algs)"
    }

    func assertBadProof(_ proof: String?, token: String, description: String, file: StaticString = #filePath, line: UInt = #line) {
        assertRefused(get(serverA, authorization: "DPoP " + token, dpop: proof), error: "invalid_dpop_proof",
                      description: description, challenge: proofChallenge(description), file: file, line: line)
    }

    // MARK: accepted

    func testABoundTokenWithItsProofReadsBothAPIs() throws {
        let token = TokenFactory.boundToken(to: phone.thumbprint)
        let response = get(serverA, authorization: "DPoP " + token, dpop: phone.proof(for: token))
        XCTAssertEqual(response.status, 200, String(decoding: response.body, as: UTF8.self))
        XCTAssertEqual(response.header("Cache-Control"), "no-store")
        XCTAssertNil(response.header("DPoP-Nonce"), "nonces are off by default")
        XCTAssertTrue(challenges(response).isEmpty)
        let body = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
        XCTAssertEqual(body["user"] as? String, "alice@example.com")
        XCTAssertEqual((body["data"] as? [Any])?.count, 3)
        let atB = get(serverB, authorization: "DPoP " + token, dpop: phone.proof(for: token, uri: TokenFactory.apiB + "/api/records"))
        XCTAssertEqual(atB.status, 200)
    }

    func testTheSchemeNameIsCaseInsensitiveAndAnyIatInTheWindowIsFresh() {
        let token = TokenFactory.boundToken(to: phone.thumbprint)
        XCTAssertEqual(get(serverA, authorization: "dpop " + token, dpop: phone.proof(for: token)).status, 200)
        XCTAssertEqual(get(serverA, authorization: "DPoP " + token, dpop: phone.proof(for: token, iat: now - 120)).status, 200)
        XCTAssertEqual(get(serverA, authorization: "DPoP " + token, dpop: phone.proof(for: token, iat: now + 60)).status, 200)
    }

    // MARK: the token and the scheme

    func testABoundTokenSentAsBearerIsRefused() {
        let token = TokenFactory.boundToken(to: phone.thumbprint)
        let description = "the access token is bound to a DPoP key: send it as Authorization: DPoP with a DPoP proof"
        for proof in [nil, phone.proof(for: token)] {
            assertRefused(get(serverA, authorization: "Bearer " + token, dpop: proof), error: "token_requires_dpop",
                          description: description, challenge: proofChallenge(description, error: "invalid_token"))
        }
    }

    func testAnUnboundTokenUnderDPoPIsRefused() {
        let token = TokenFactory.issuerToken()
        let description = "the access token is not bound to a DPoP key: send it as Authorization: Bearer"
        assertRefused(get(serverA, authorization: "DPoP " + token, dpop: phone.proof(for: token)), error: "token_not_dpop_bound",
                      description: description, challenge: proofChallenge(description, error: "invalid_token"))
        XCTAssertEqual(get(serverA, authorization: "Bearer " + token, dpop: phone.proof(for: token)).status, 200,
                       "a bearer token stays a bearer token; a stray DPoP header changes nothing")
    }

    func testTokenFailuresUnderDPoPAreAnsweredInTheDPoPScheme() {
        let expired = TokenFactory.boundToken(to: phone.thumbprint, claims: TokenFactory.claims(now: now - 7200))
        assertRefused(get(serverA, authorization: "DPoP " + expired, dpop: phone.proof(for: expired)), error: "token_expired",
                      description: "the access token has expired", challenge: proofChallenge("the access token has expired", error: "invalid_token"))
        let forged = TokenFactory.token(claims: TokenFactory.changing("cnf", to: .object(["jkt": .string(phone.thumbprint)])), key: TestKeys.stranger)
        assertRefused(get(serverA, authorization: "DPoP " + forged, dpop: phone.proof(for: forged)), error: "invalid_signature",
                      description: "the access token signature does not verify",
                      challenge: proofChallenge("the access token signature does not verify", error: "invalid_token"))
        let narrow = TokenFactory.boundToken(to: phone.thumbprint, claims: TokenFactory.changing("scope", to: "api:serverB"))
        assertRefused(get(serverA, authorization: "DPoP " + narrow, dpop: phone.proof(for: narrow)), status: 403,
                      error: "insufficient_scope", description: "the access token does not grant api:serverA",
                      challenge: "DPoP realm=\"\(realmA)\", error=\"insufficient_scope\", scope=\"api:serverA\", \(algs)")
        assertRefused(get(serverA, authorization: "DPoP ", dpop: nil), error: "malformed_token",
                      description: "the Authorization header is not a valid DPoP credential",
                      challenge: proofChallenge("the Authorization header is not a valid DPoP credential", error: "invalid_token"))
    }

    func testACnfWithoutJktIsAMalformedToken() {
        let token = TokenFactory.token(claims: TokenFactory.changing("cnf", to: .object(["x5t#S256": "abc"])))
        let response = get(serverA, authorization: "Bearer " + token)
        XCTAssertEqual(response.status, 401)
        XCTAssertEqual(challenges(response), ["Bearer realm=\"\(realmA)\", error=\"invalid_token\", error_description=\"the access token claims are missing or of the wrong type\""])
    }

    // MARK: the proof

    func testMissingAndRepeatedProofs() {
        let token = TokenFactory.boundToken(to: phone.thumbprint)
        assertBadProof(nil, token: token, description: "a DPoP proof is required in the DPoP header with Authorization: DPoP")
        assertBadProof("", token: token, description: "a DPoP proof is required in the DPoP header with Authorization: DPoP")
        assertBadProof(phone.proof(for: token) + ", " + phone.proof(for: token), token: token,
                       description: "send exactly one DPoP header holding one proof")
    }

    func testEveryProofCheck() throws {
        let token = TokenFactory.boundToken(to: phone.thumbprint)
        let cases: [(String, String)] = [
            (phone.proof(for: token, method: "POST"), "the DPoP proof's htm is not the method of this request"),
            (phone.proof(for: token, uri: TokenFactory.apiA + "/api/records"), "the DPoP proof's htu is not https://localhost:8444/api/data"),
            (phone.proof(for: token, uri: "https://localhost:9999/api/data"), "the DPoP proof's htu is not https://localhost:8444/api/data"),
            (phone.proof(for: nil), "the DPoP proof has no ath (the hash of the access token)"),
            (phone.proof(for: TokenFactory.issuerToken()), "the DPoP proof's ath is not the hash of this access token"),
            (phone.proof(for: token, iat: now - 121), "the DPoP proof's iat is too old or too far ahead (120 s back, 60 s ahead)"),
            (phone.proof(for: token, iat: now + 61), "the DPoP proof's iat is too old or too far ahead (120 s back, 60 s ahead)"),
            (phone.sign(header: phone.header(typ: "JWT"), claims: phone.claims(accessToken: token)), "the DPoP proof's typ is not dpop+jwt"),
            (phone.sign(header: phone.header(alg: "none"), claims: phone.claims(accessToken: token)),
             "the DPoP proof's alg is not one of ES256 EdDSA RS256"),
            (phone.sign(header: phone.header(alg: "HS256"), claims: phone.claims(accessToken: token)),
             "the DPoP proof's alg is not one of ES256 EdDSA RS256"),
            (phone.sign(header: phone.header(jwk: .object(["kty": "EC", "crv": "P-256", "x": .string(phone.jwk.x!), "y": .string(phone.jwk.y!),
                                                           "d": "c2VjcmV0"])), claims: phone.claims(accessToken: token)),
             "the DPoP proof's jwk contains private key members"),
            ("not.a.proof", "the DPoP proof is not a compact JWS with typ, alg, jwk, jti, htm, htu and iat"),
        ]
        for (proof, description) in cases { assertBadProof(proof, token: token, description: description) }
        // A signature by another key than the jwk names.
        let other = ProofMaker()
        let input = TokenFactory.signingInput(header: phone.header(), claims: phone.claims(accessToken: token))
        assertBadProof(input + "." + Base64URL.encode(try other.key.sign(Array(input.utf8))), token: token,
                       description: "the DPoP proof's signature does not verify with its jwk")
    }

    func testAProofByAnotherKeyThanTheTokenIsBoundTo() {
        let token = TokenFactory.boundToken(to: phone.thumbprint)
        let thief = ProofMaker()
        let description = "the DPoP proof is not signed with the key the access token is bound to"
        assertRefused(get(serverA, authorization: "DPoP " + token, dpop: thief.proof(for: token)), error: "dpop_key_mismatch",
                      description: description, challenge: proofChallenge(description, error: "invalid_token"))
    }

    // MARK: replay (§11.1)

    func testAProofIsAcceptedOnceAcrossProcesses() throws {
        let token = TokenFactory.boundToken(to: phone.thumbprint)
        let proof = phone.proof(for: token)
        let otherProcess = try makeServerA()
        XCTAssertEqual(get(serverA, authorization: "DPoP " + token, dpop: proof).status, 200)
        let description = "the DPoP proof has been used before: make a new proof (new jti) for every request"
        assertRefused(get(serverA, authorization: "DPoP " + token, dpop: proof), error: "invalid_dpop_proof",
                      description: description, challenge: proofChallenge(description))
        assertRefused(get(otherProcess, authorization: "DPoP " + token, dpop: proof), error: "invalid_dpop_proof",
                      description: description, challenge: proofChallenge(description))
        // The token stays cached and good: a new proof is accepted at once.
        XCTAssertEqual(get(otherProcess, authorization: "DPoP " + token, dpop: phone.proof(for: token)).status, 200)
    }

    /// The last second a proof can pass is the last its jti is remembered:
    /// one issued 60 s ahead is fresh for 180 s after it is first used.
    func testAProofIssuedAheadIsRefusedAsReplayedForAsLongAsItIsFresh() {
        let token = TokenFactory.boundToken(to: phone.thumbprint)  // good for 900 s
        let proof = phone.proof(for: token, iat: now + 60)
        XCTAssertEqual(get(serverA, authorization: "DPoP " + token, dpop: proof).status, 200)
        let start = now
        for later in [Int64(1), 179, 180] {
            now = start + Int(later)
            let response = get(serverA, authorization: "DPoP " + token, dpop: proof)
            XCTAssertEqual(response.status, 401, "at +\(later) s")
            XCTAssertTrue(challenges(response).first?.contains("used before") == true, "at +\(later) s: \(challenges(response))")
        }
        now = start + 181
        XCTAssertTrue(challenges(get(serverA, authorization: "DPoP " + token, dpop: proof)).first?.contains("used before") == false,
                      "past its window the proof is stale instead")
    }

    func testARefusedProofSpendsNoJTI() {
        let token = TokenFactory.boundToken(to: phone.thumbprint)
        let jti = "retried-jti"
        XCTAssertEqual(get(serverA, authorization: "DPoP " + token, dpop: phone.proof(for: token, uri: TokenFactory.apiB, jti: jti)).status, 401)
        XCTAssertEqual(get(serverA, authorization: "DPoP " + token, dpop: phone.proof(for: token, jti: jti)).status, 200)
    }

    func testTheSameJTIAtAnotherResourceIsAnotherProof() {
        let token = TokenFactory.boundToken(to: phone.thumbprint)
        XCTAssertEqual(get(serverA, authorization: "DPoP " + token, dpop: phone.proof(for: token, jti: "j")).status, 200)
        XCTAssertEqual(get(serverB, authorization: "DPoP " + token,
                           dpop: phone.proof(for: token, uri: TokenFactory.apiB + "/api/records", jti: "j")).status, 200)
    }

    func testACachedTokenStillNeedsAGoodProofEveryTime() {
        let token = TokenFactory.boundToken(to: phone.thumbprint)
        XCTAssertEqual(get(serverA, authorization: "DPoP " + token, dpop: phone.proof(for: token)).status, 200)
        XCTAssertEqual(serverA.validator.verifiedTokens.count, 1)
        XCTAssertEqual(get(serverA, authorization: "DPoP " + token, dpop: nil).status, 401)
        XCTAssertEqual(get(serverA, authorization: "DPoP " + token, dpop: ProofMaker().proof(for: token)).status, 401)
        XCTAssertEqual(get(serverA, authorization: "Bearer " + token).status, 401, "the cache keeps no scheme decision")
        XCTAssertEqual(get(serverA, authorization: "DPoP " + token, dpop: phone.proof(for: token)).status, 200)
    }

    // MARK: nonces (§9)

    func testWithNoncesOnTheUseDPoPNonceRoundTripSucceeds() throws {
        let guarded = try makeServerA(nonces: true)
        let token = TokenFactory.boundToken(to: phone.thumbprint)
        let first = get(guarded, authorization: "DPoP " + token, dpop: phone.proof(for: token))
        let description = "this resource server requires a nonce in the DPoP proof: use the DPoP-Nonce header's value"
        XCTAssertEqual(first.status, 401)
        XCTAssertEqual(challenges(first), [proofChallenge(description, error: "use_dpop_nonce")])
        XCTAssertEqual(String(decoding: first.body, as: UTF8.self), "{\"error\":\"use_dpop_nonce\",\"error_description\":\"\(description)\"}")
        let nonce = try XCTUnwrap(first.header("DPoP-Nonce"))
        let second = get(guarded, authorization: "DPoP " + token, dpop: phone.proof(for: token, nonce: nonce))
        XCTAssertEqual(second.status, 200)
        XCTAssertEqual(second.header("DPoP-Nonce"), nonce, "the same period's nonce, as the next one to use")
        XCTAssertEqual(second.headers.filter { $0.name == "DPoP-Nonce" }.count, 1)
        // Another process derives the same nonce from the same key file.
        XCTAssertEqual(get(try makeServerA(nonces: true), authorization: "DPoP " + token, dpop: phone.proof(for: token, nonce: nonce)).status, 200)
        // A bearer request is not asked for nonces; a missing token learns one.
        XCTAssertNil(get(guarded, authorization: "Bearer " + TokenFactory.issuerToken()).header("DPoP-Nonce"))
        XCTAssertEqual(get(guarded, authorization: nil).header("DPoP-Nonce"), nonce)
    }

    func testANonceIsGoodForItsPeriodAndTheNextOnlyAndOnlyAtItsServer() throws {
        let guarded = try makeServerA(nonces: true)
        let token = TokenFactory.boundToken(to: phone.thumbprint)
        let nonce = try XCTUnwrap(get(guarded, authorization: nil).header("DPoP-Nonce"))
        now += Int(DPoPNonces.period)
        XCTAssertEqual(get(guarded, authorization: "DPoP " + token, dpop: phone.proof(for: token, iat: now, nonce: nonce)).status, 200)
        now += Int(DPoPNonces.period)
        let stale = get(guarded, authorization: "DPoP " + token, dpop: phone.proof(for: token, iat: now, nonce: nonce))
        XCTAssertEqual(stale.status, 401)
        XCTAssertEqual(String(decoding: stale.body, as: UTF8.self),
                       "{\"error\":\"use_dpop_nonce\",\"error_description\":\"the DPoP proof's nonce is not current: use the DPoP-Nonce header's value\"}")
        XCTAssertNotEqual(stale.header("DPoP-Nonce"), nonce)
        // api-b's nonces, from the same key file, are not api-a's.
        var config = self.config!
        config.apiDPoPNonces = true
        let guardB = try ResourceServerSetup.dpopGuard(config: config, policy: ServerB.policy(config: config), path: ServerB.path)
        let nonceB = try XCTUnwrap(guardB.currentNonce(now: now))
        XCTAssertEqual(get(guarded, authorization: "DPoP " + token, dpop: phone.proof(for: token, iat: now, nonce: nonceB)).status, 401)
    }

    func testTheNonceKeyIsTheAPIsOwnFile() throws {
        _ = try makeServerA(nonces: true)
        let path = ResourceServerSetup.dpopNonceKeyPath(config: config)
        XCTAssertTrue(path.hasPrefix(directory.path + "/api-keys/"))
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        XCTAssertEqual((attributes[.posixPermissions] as? NSNumber)?.intValue, 0o600)
        XCTAssertFalse(FileManager.default.fileExists(atPath: config.keysDirectory), "nothing in the issuer's keys/")
    }

    func testNoncesOffMeansNoKeyFile() {
        XCTAssertFalse(FileManager.default.fileExists(atPath: ResourceServerSetup.dpopNonceKeyPath(config: config)))
    }
}

/// The replay table itself: atomic claims, expiry, sweeping.
final class SQLiteDPoPReplayCacheTests: XCTestCase {
    var directory: TemporaryDirectory!
    var path: String { directory.path + "/dpop-proofs.sqlite" }

    override func setUpWithError() throws { directory = try TemporaryDirectory() }
    override func tearDown() { directory.remove() }

    func testAHashIsClaimedOnceUntilItExpires() throws {
        let cache = try SQLiteDPoPReplayCache(database: SQLiteDatabase(path: path))
        let other = try SQLiteDPoPReplayCache(database: SQLiteDatabase(path: path))
        let hash = SHA256.hash("proof")
        XCTAssertTrue(try cache.claim(hash, expiresAt: 1180, now: 1000))
        XCTAssertFalse(try cache.claim(hash, expiresAt: 1190, now: 1010))
        XCTAssertFalse(try other.claim(hash, expiresAt: 1190, now: 1179), "another connection (process) sees the claim")
        XCTAssertTrue(try other.claim(hash, expiresAt: 1360, now: 1180), "an expired row not swept yet is claimed again")
        XCTAssertFalse(try cache.claim(hash, expiresAt: 1370, now: 1190))
        XCTAssertTrue(try cache.claim(SHA256.hash("another proof"), expiresAt: 1190, now: 1010))
    }

    func testExpiredRowsAreSweptAsClaimsGoOn() throws {
        let cache = try SQLiteDPoPReplayCache(database: SQLiteDatabase(path: path))
        for index in 0..<200 { XCTAssertTrue(try cache.claim(SHA256.hash("old \(index)"), expiresAt: 1180, now: 1000)) }
        XCTAssertEqual(try cache.count(), 200)
        // Later: the first claim of each sweep interval deletes expired rows.
        for index in 0..<(SQLiteDPoPReplayCache.sweepInterval + 1) {
            XCTAssertTrue(try cache.claim(SHA256.hash("new \(index)"), expiresAt: 2180, now: 2000))
        }
        XCTAssertEqual(try cache.count(), Int64(SQLiteDPoPReplayCache.sweepInterval + 1), "every expired row is gone")
        XCTAssertEqual(try cache.sweep(now: 2100), 0, "live rows stay")
    }

    func testTheProofHashSeparatesItsParts() {
        let hash = DPoPResourceGuard.proofHash
        XCTAssertNotEqual(hash("https://a/x", "jkt", "jti"), hash("https://a/x", "jk", "tjti"))
        XCTAssertNotEqual(hash("https://a/x", "jkt", "jti"), hash("https://a/y", "jkt", "jti"))
        XCTAssertEqual(hash("https://a/x", "jkt", "jti"), SHA256.hash(Array("https://a/x\u{0}jkt\u{0}jti".utf8)))
    }
}
