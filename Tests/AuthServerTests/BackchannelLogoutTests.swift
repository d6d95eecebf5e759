import Foundation
import XCTest
@testable import AuthServer
import IssuerStorage
import SQLiteClient
import SSOCore

/// Back-Channel Logout 1.0: every way a session ends queues one notice per
/// client with a back-channel URI that was issued tokens in it; a refused
/// refresh says why; the logout token is what §2.4 asks; a delivery's
/// answer is sorted as §2.8 says.
final class BackchannelLogoutTests: SignInTestCase {
    typealias H = SignInHarness
    static let receiver = "https://rp.example.com/backchannel?tenant=1"

    override func setUpWithError() throws {
        try super.setUpWithError()
        try issuer.database.execute("UPDATE clients SET backchannel_logout_uri = ? WHERE client_id = 'mobile-app-001'", [.text(Self.receiver)])
    }

    /// Signs in, exchanges the code; the token response and the session's sid.
    func signedIn() throws -> (tokens: [String: Any], sid: String) {
        let signIn = try harness.signIn(H.authorizationParameters(scope: H.fullScope))
        let response = harness.tokenPOST(H.codeExchange(code: signIn.code))
        XCTAssertEqual(response.status, 200, response.bodyText)
        let tokens = response.jsonObject()
        let sid = try XCTUnwrap(harness.verifiedJWT(tokens["id_token"] as! String).claims["sid"] as? String)
        return (tokens, sid)
    }

    func notices() throws -> [(clientID: String, notice: BackchannelLogoutNotice)] {
        try issuer.database.query("SELECT recipient, message FROM mail_outbox WHERE kind = 'backchannel_logout' ORDER BY id").map {
            ($0.string(0), try JSONDecoder().decode(BackchannelLogoutNotice.self, from: Data($0.bytes(1))))
        }
    }

    func refresh(_ token: String) -> Response {
        harness.tokenPOST(RequestParameters([("grant_type", "refresh_token"), ("refresh_token", token), ("client_id", "mobile-app-001")]))
    }

    func assertRefused(_ response: Response, reason: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(response.status, 400, response.bodyText, file: file, line: line)
        XCTAssertEqual(response.jsonObject()["error"] as? String, "invalid_grant", file: file, line: line)
        XCTAssertEqual(response.jsonObject()["reason"] as? String, reason, file: file, line: line)
    }

    func testSigningOutQueuesOneNoticeForTheClientAndTheRefreshSaysSessionEnded() throws {
        let (tokens, sid) = try signedIn()
        XCTAssertEqual(try notices().count, 0, "nothing while the session lives")
        try harness.services.accountChanges.endSession(sid: sid)
        try harness.services.accountChanges.endSession(sid: sid)
        let queued = try notices()
        XCTAssertEqual(queued.count, 1, "one notice, however often the session is ended")
        XCTAssertEqual(queued.first?.clientID, "mobile-app-001")
        XCTAssertEqual(queued.first?.notice, BackchannelLogoutNotice(sub: harness.alice.subject, sid: sid, reason: "session_ended"))
        assertRefused(refresh(tokens["refresh_token"] as! String), reason: "session_ended")
    }

    func testAPasswordChangeTellsTheBackendAndTheApp() throws {
        let (tokens, sid) = try signedIn()
        try harness.services.accountChanges.changePassword(email: DemoData.email, password: "a brand new passphrase 42")
        XCTAssertEqual(try notices().map(\.notice), [BackchannelLogoutNotice(sub: harness.alice.subject, sid: sid, reason: "password_changed")])
        assertRefused(refresh(tokens["refresh_token"] as! String), reason: "password_changed")
    }

    func testDisablingTellsTheBackendAndTheApp() throws {
        let (tokens, _) = try signedIn()
        try harness.services.accountChanges.disable(email: DemoData.email)
        XCTAssertEqual(try notices().map(\.notice.reason), ["user_disabled"])
        assertRefused(refresh(tokens["refresh_token"] as! String), reason: "user_disabled")
    }

    func testErasingTheAccountTellsTheBackendWithTheSubjectItHad() throws {
        let (_, sid) = try signedIn()
        try harness.services.accountChanges.delete(email: DemoData.email)
        XCTAssertEqual(try notices().map(\.notice), [BackchannelLogoutNotice(sub: harness.alice.subject, sid: sid, reason: "user_disabled")])
    }

    func testReuseEndsTheSessionTellsTheBackendAndBothCopiesHearWhy() throws {
        let (tokens, sid) = try signedIn()
        let spent = tokens["refresh_token"] as! String
        let successor = refresh(spent).jsonObject()["refresh_token"] as! String
        clock.advance(11)
        assertRefused(refresh(spent), reason: "refresh_token_reused")
        assertRefused(refresh(successor), reason: "refresh_token_reused")
        XCTAssertEqual(try notices().map(\.notice), [BackchannelLogoutNotice(sub: harness.alice.subject, sid: sid, reason: "refresh_token_reused")])
        XCTAssertEqual(try harness.services.sessions.listing(sid: sid)?.state, .ended)
    }

    func testAClientWithoutAURIIsNotToldAndASessionWithoutTokensTellsNobody() throws {
        try issuer.database.execute("UPDATE clients SET backchannel_logout_uri = NULL")
        let (_, sid) = try signedIn()
        try harness.services.accountChanges.endSession(sid: sid)
        XCTAssertEqual(try notices().count, 0)
        // A session whose code was never redeemed: no client holds anything.
        try issuer.database.execute("UPDATE clients SET backchannel_logout_uri = ? WHERE client_id = 'mobile-app-001'", [.text(Self.receiver)])
        let unredeemed = try harness.signIn(H.authorizationParameters(scope: H.fullScope))
        _ = unredeemed
        for listing in try harness.services.sessions.liveListings(userID: harness.alice.id) { try harness.services.accountChanges.endSession(sid: listing.sid) }
        XCTAssertEqual(try notices().count, 0, "the client was issued nothing in that session")
    }

    func testRefusedRefreshesSayWhy() throws {
        let (tokens, _) = try signedIn()
        assertRefused(refresh("not-a-token-we-issued"), reason: "refresh_token_expired")
        let other = harness.tokenPOST(RequestParameters([("grant_type", "refresh_token"), ("refresh_token", tokens["refresh_token"] as! String),
                                                         ("client_id", "demo-spa")]))
        if other.status == 400, other.jsonObject()["error"] as? String == "invalid_grant" {
            XCTAssertEqual(other.jsonObject()["reason"] as? String, "client_changed")
        }
        clock.advance(Int64(harness.services.settings.lifetimes.refreshToken) + 1)
        assertRefused(refresh(tokens["refresh_token"] as! String), reason: "refresh_token_expired")
    }

    func testTheLogoutTokenIsWhatSection24Asks() throws {
        let token = try harness.services.tokenIssuer.signLogoutToken(clientID: "mobile-app-001", subject: "sub-1", sid: "sid-1")
        let keys = try harness.publishedKeys().keys
        let jwt = try CompactJWT(parsing: token).verify(algorithms: [.rs256], types: .required(["logout+jwt"], allowingApplicationPrefix: false)) { kid in
            (try? keys.first { $0.kid == kid }?.publicKey()) ?? nil
        }
        XCTAssertEqual(jwt.header.typ, "logout+jwt")
        let payload = try XCTUnwrap(Base64URL.decode(String(token.split(separator: ".")[1])))
        let claims = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any])
        XCTAssertEqual(Set(claims.keys), ["iss", "sub", "aud", "iat", "exp", "jti", "events", "sid"], "never nonce (§2.4)")
        XCTAssertEqual(claims["iss"] as? String, harness.issuerOrigin)
        XCTAssertEqual(claims["aud"] as? String, "mobile-app-001")
        XCTAssertEqual(claims["sub"] as? String, "sub-1")
        XCTAssertEqual(claims["sid"] as? String, "sid-1")
        XCTAssertEqual(claims["iat"] as? Int, Int(clock.now))
        XCTAssertEqual(claims["exp"] as? Int, Int(clock.now) + 120)
        let events = try XCTUnwrap(claims["events"] as? [String: Any])
        XCTAssertEqual(events.count, 1)
        XCTAssertEqual((events["http://schemas.openid.net/event/backchannel-logout"] as? [String: Any])?.count, 0, "the empty object")
    }

    /// A receiver that answers from a script and keeps what it was sent.
    final class ScriptedReceiver: ProviderDocumentFetching {
        var answers: [Result<Int, Error>]
        var posts: [(url: String, fields: [(String, String)])] = []
        init(_ answers: [Result<Int, Error>]) { self.answers = answers }
        func get(_ url: String) throws -> (status: Int, body: [UInt8]) { throw ValidationError("no GET here") }
        func postForm(_ url: String, _ fields: [(String, String)], headers: [(name: String, value: String)]) throws -> (status: Int, body: [UInt8]) {
            posts.append((url, fields))
            return (try answers.removeFirst().get(), [])
        }
    }

    func testADeliveryPostsTheTokenToTheURIAndSortsTheAnswer() throws {
        let (_, sid) = try signedIn()
        try harness.services.accountChanges.endSession(sid: sid)
        let notice = try XCTUnwrap(issuer.database.queryOne("SELECT message FROM mail_outbox WHERE kind = 'backchannel_logout'")?.bytes(0))
        let receiver = ScriptedReceiver([.success(200), .success(204), .success(503), .failure(ValidationError("connection refused")),
                                         .success(400), .success(302), .success(429)])
        let delivery = BackchannelLogoutDelivery(storage: harness.services.storage, tokenIssuer: harness.services.tokenIssuer, http: receiver)
        let results = (0..<7).map { _ in delivery.deliver(clientID: "mobile-app-001", notice: notice) }
        XCTAssertEqual(results.map(\.result), [
            .delivered(status: 200), .delivered(status: 204), .retry("the receiver answered 503"), .retry("connection refused"),
            .failed("the receiver answered 400"), .failed("the receiver answered 302, a redirect (never followed)"),
            .retry("the receiver answered 429"),
        ])
        XCTAssertEqual(results.first?.receiver, "https://rp.example.com", "the origin only: the query may hold the receiver's secret")
        XCTAssertEqual(receiver.posts.first?.url, Self.receiver, "the registered URI, query kept")
        XCTAssertEqual(receiver.posts.first?.fields.map(\.0), ["logout_token"])
        let token = try XCTUnwrap(receiver.posts.first?.fields.first?.1)
        let payload = try XCTUnwrap(Base64URL.decode(String(token.split(separator: ".")[1])))
        let claims = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any])
        XCTAssertEqual(claims["sid"] as? String, sid)
        XCTAssertEqual(claims["sub"] as? String, harness.alice.subject)
        XCTAssertNotEqual(receiver.posts[0].fields[0].1, receiver.posts[1].fields[0].1, "each attempt signs a fresh token")
        // The client's URI taken away meanwhile: nobody to tell.
        try issuer.database.execute("UPDATE clients SET backchannel_logout_uri = NULL")
        XCTAssertEqual(delivery.deliver(clientID: "mobile-app-001", notice: notice).result,
                       .failed("the client no longer has a back-channel logout URI"))
        XCTAssertEqual(delivery.deliver(clientID: "mobile-app-001", notice: [1, 2]).result, .failed("the queued notice is unreadable"))
    }
}
