import XCTest
@testable import ResourceServer
import SSOCore

final class JWKSCacheTests: XCTestCase {
    let start = TokenFactory.now
    let kid = TestKeys.issuerKID

    func makeCache(_ fetcher: FakeJWKSFetcher, store: JWKSPersisting? = nil, log: @escaping (String) -> Void = { _ in }) -> JWKSCache {
        JWKSCache(fetcher: fetcher, store: store, log: log)
    }

    func testFetchesLazilyOnFirstNeedOnly() throws {
        let fetcher = FakeJWKSFetcher()
        let cache = makeCache(fetcher)
        XCTAssertEqual(fetcher.calls, 0, "nothing fetched at start: the issuer may not be up yet")
        XCTAssertNotNil(try cache.key(for: kid, now: start))
        XCTAssertNotNil(try cache.key(for: kid, now: start + 3599))
        XCTAssertEqual(fetcher.calls, 1)
    }

    func testRefreshesWhenOlderThanAnHour() throws {
        let fetcher = FakeJWKSFetcher()
        let cache = makeCache(fetcher)
        _ = try cache.key(for: kid, now: start)
        _ = try cache.key(for: kid, now: start + 3600)
        XCTAssertEqual(fetcher.calls, 2)
        _ = try cache.key(for: kid, now: start + 3601)
        XCTAssertEqual(fetcher.calls, 2)
    }

    func testKeepsTheStaleSetWhileTheIssuerIsUnreachable() throws {
        let fetcher = FakeJWKSFetcher()
        var logged: [String] = []
        let cache = makeCache(fetcher, log: { logged.append($0) })
        _ = try cache.key(for: kid, now: start)
        fetcher.result = FakeJWKSFetcher.unreachable
        XCTAssertNotNil(try cache.key(for: kid, now: start + 4000), "stale key still served")
        XCTAssertEqual(fetcher.calls, 2)
        XCTAssertNotNil(try cache.key(for: kid, now: start + 4010))
        XCTAssertNil(try cache.key(for: "unknown", now: start + 4020), "no unknown-kid refetch during the failure back-off")
        XCTAssertEqual(fetcher.calls, 2, "no retry within 30 s of a failure")
        XCTAssertNotNil(try cache.key(for: kid, now: start + 4030))
        XCTAssertEqual(fetcher.calls, 3, "retried after 30 s")
        XCTAssertTrue(logged.contains { $0.contains("JWKS fetch failed") && $0.contains("keeping 1 known keys") }, "\(logged)")
        fetcher.result = .success(TestKeys.rotatedSet)
        XCTAssertNotNil(try cache.key(for: TestKeys.rotatedKID, now: start + 4060))
        XCTAssertEqual(fetcher.calls, 4)
    }

    func testUnknownKidRefetchIsRateLimitedPerKidAndPerSecond() throws {
        let fetcher = FakeJWKSFetcher()
        let cache = makeCache(fetcher)
        XCTAssertNil(try cache.key(for: "forged-1", now: start))
        XCTAssertEqual(fetcher.calls, 1, "the first fetch already answered for this kid: no second fetch")
        XCTAssertNil(try cache.key(for: "forged-2", now: start + 1))
        XCTAssertEqual(fetcher.calls, 2, "the first unknown kid after the initial fetch refetches")
        XCTAssertNil(try cache.key(for: "forged-3", now: start + 1))
        XCTAssertEqual(fetcher.calls, 2, "at most one refetch a second")
        for _ in 0..<10 { XCTAssertNil(try cache.key(for: "forged-2", now: start + 5)) }
        XCTAssertEqual(fetcher.calls, 2, "one kid is retried at most once per 30 s")
        XCTAssertNil(try cache.key(for: "forged-2", now: start + 31))
        XCTAssertEqual(fetcher.calls, 3)
        XCTAssertNotNil(try cache.key(for: kid, now: start + 32), "known kids never wait")
        XCTAssertEqual(fetcher.calls, 3)
    }

    /// The reason the limit is per kid: forged kids just before a rotation
    /// must not keep the genuine new kid waiting for 30 s.
    func testARotatedKidIsFetchedWithinASecondEvenDuringAForgedKidStorm() throws {
        let fetcher = FakeJWKSFetcher()
        let cache = makeCache(fetcher)
        XCTAssertNil(try cache.key(for: "forged-a", now: start))
        for second in 1...5 { XCTAssertNil(try cache.key(for: "forged-\(second)", now: start + second)) }
        fetcher.result = .success(TestKeys.rotatedSet)
        XCTAssertNotNil(try cache.key(for: TestKeys.rotatedKID, now: start + 6))
    }

    func testNothingEverFetchedIsUnavailableAndRetriedAfterFiveSeconds() throws {
        let fetcher = FakeJWKSFetcher(FakeJWKSFetcher.unreachable)
        let cache = makeCache(fetcher)
        XCTAssertThrowsError(try cache.key(for: kid, now: start)) { XCTAssertTrue($0 is SigningKeysUnavailableError) }
        XCTAssertThrowsError(try cache.key(for: kid, now: start + 4))
        XCTAssertEqual(fetcher.calls, 1)
        fetcher.result = .success(TestKeys.issuerSet)
        XCTAssertNotNil(try cache.key(for: kid, now: start + 5))
        XCTAssertEqual(fetcher.calls, 2)
    }

    func testSkipsMembersThatAreNotRS256SigningKeys() throws {
        let good = TestKeys.jwk(TestKeys.issuer, kid: "good")
        var encryption = TestKeys.jwk(TestKeys.rotated, kid: "enc"); encryption.use = "enc"
        var otherAlg = TestKeys.jwk(TestKeys.rotated, kid: "ps"); otherAlg.alg = "PS256"
        var broken = TestKeys.jwk(TestKeys.rotated, kid: "broken"); broken.n = "!!!"
        var short = TestKeys.jwk(TestKeys.rotated, kid: "short"); short.n = Base64URL.encode([UInt8](repeating: 0xff, count: 64))
        var noKID = TestKeys.jwk(TestKeys.rotated, kid: "x"); noKID.kid = nil
        var ec = TestKeys.jwk(TestKeys.rotated, kid: "ec"); ec.kty = "EC"
        let duplicate = TestKeys.jwk(TestKeys.stranger, kid: "good")
        let fetcher = FakeJWKSFetcher(.success(JWKSet(keys: [encryption, otherAlg, broken, short, noKID, ec, good, duplicate])))
        let cache = makeCache(fetcher)
        XCTAssertNotNil(try cache.key(for: "good", now: start))
        XCTAssertEqual(cache.keyIDs, ["good"])
        let signature = try TestKeys.issuer.signRS256([1, 2, 3])
        XCTAssertTrue(try cache.key(for: "good", now: start)?.verify(signature: signature, message: [1, 2, 3]) ?? false,
                      "the first member with a kid wins")
    }

    // MARK: persistence

    /// A forged kid can make a process refetch once a second; finding the
    /// same keys must not throw away every verified token (the generation)
    /// nor rewrite the saved copy.
    func testARefetchThatFindsTheSameKeysChangesNothing() throws {
        let store = InMemoryJWKSStore()
        let fetcher = FakeJWKSFetcher()
        let cache = makeCache(fetcher, store: store)
        _ = try cache.key(for: kid, now: start)
        let generation = cache.generation
        for second in 1...3 { XCTAssertNil(try cache.key(for: "forged-\(second)", now: start + second)) }
        XCTAssertEqual(fetcher.calls, 4)
        XCTAssertEqual(cache.generation, generation, "the same keys: verified tokens stay verified")
        XCTAssertEqual(store.saves, 1, "and the saved copy is not rewritten")
        fetcher.result = .success(TestKeys.rotatedSet)
        XCTAssertNotNil(try cache.key(for: TestKeys.rotatedKID, now: start + 4))
        XCTAssertEqual(cache.generation, generation + 1, "other keys: a new generation")
        XCTAssertEqual(store.saves, 2)
    }

    func testSavesEachGoodFetchThatChangesTheKeys() throws {
        let store = InMemoryJWKSStore()
        let fetcher = FakeJWKSFetcher()
        let cache = makeCache(fetcher, store: store)
        _ = try cache.key(for: kid, now: start)
        XCTAssertEqual(store.saves, 1)
        XCTAssertEqual(store.saved?.keySet, TestKeys.issuerSet)
        fetcher.result = FakeJWKSFetcher.unreachable
        _ = try cache.key(for: kid, now: start + 7200)
        XCTAssertEqual(store.saves, 1, "a failed fetch never overwrites the last good set")
    }

    func testRestartedProcessValidatesFromTheSavedSetWithoutTheIssuer() throws {
        let store = InMemoryJWKSStore(saved: (TestKeys.issuerSet, start - 600))
        let fetcher = FakeJWKSFetcher(FakeJWKSFetcher.unreachable)
        let cache = makeCache(fetcher, store: store)
        XCTAssertEqual(cache.keyIDs, [kid], "loaded at start")
        XCTAssertNotNil(try cache.key(for: kid, now: start))
        XCTAssertEqual(fetcher.calls, 0, "a set saved 10 minutes ago is fresh enough")
    }

    func testOldSavedSetIsRefreshedButKeptWhenTheIssuerIsDown() throws {
        let store = InMemoryJWKSStore(saved: (TestKeys.issuerSet, start - 86_400))
        let fetcher = FakeJWKSFetcher(FakeJWKSFetcher.unreachable)
        let cache = makeCache(fetcher, store: store)
        XCTAssertNotNil(try cache.key(for: kid, now: start))
        XCTAssertEqual(fetcher.calls, 1)
        fetcher.result = .success(TestKeys.rotatedSet)
        XCTAssertNotNil(try cache.key(for: TestKeys.rotatedKID, now: start + 30))
        XCTAssertEqual(store.saved?.keySet, TestKeys.rotatedSet)
    }
}
