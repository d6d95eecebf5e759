import Foundation
import XCTest
@testable import AuthServer
import IssuerStorage
import SSOCore

/// `FederatedSignIn`, in process on a temporary issuer: the trip out, the
/// callback, the code redeemed at a fake provider's token endpoint for an ID
/// token signed with a real key, and the linking rules. (The end-to-end test
/// drives the same path through nginx against a second real Gatehouse.)
final class FederatedSignInTests: XCTestCase {
    typealias F = UpstreamFixture
    var harness: SignInHarness!
    let http = FakeProviderHTTP()
    let address = "192.0.2.7"
    let subject = "248289761001"

    override func setUpWithError() throws {
        harness = try SignInHarness()
        // Before `federatedSignIn` is first touched: it is lazy and takes
        // the fetcher it finds then.
        harness.services.providerHTTP = http
        http.documents[F.issuer + "/.well-known/openid-configuration"] = (200, Array(IdentityProviderRegistryTests.discovery(F.issuer).utf8))
        http.documents[F.endpoints.jwks] = (200, try F.standardJWKS())
        _ = try harness.services.identityProviders.add(ProviderRegistration(name: "corp", issuer: F.issuer, clientID: F.clientID, secret: "s3cret"),
                                                       fetcher: http)
    }

    override func tearDown() { harness.cleanUp() }

    var federation: FederatedSignIn { harness.services.federatedSignIn }
    var storage: any IssuerStorage { harness.services.storage }

    /// A browser's trip: its pending sign-in and what `start` stored.
    struct Trip {
        let pending: PendingLogin
        let trip: FederationTrip
        let location: String
    }

    func startTrip(file: StaticString = #filePath, line: UInt = #line) throws -> Trip {
        let pending = try harness.startLogin(file: file, line: line)
        let step = LoginStep(cookieSecret: pending.cookieSecret, formToken: pending.formToken, address: address, clientID: "mobile-app-001")
        let started = try XCTUnwrap(try federation.start(provider: "corp", step: step), file: file, line: line)
        return Trip(pending: pending, trip: started.trip, location: started.location)
    }

    /// The provider's token endpoint answers with an ID token of these
    /// claims (the good ones for this trip, changed by `changes`).
    func provider(issues changes: [String: Any?] = [:], for trip: Trip) throws {
        let token = try F.rs256(F.claims(now: harness.clock.now, nonce: trip.trip.nonce, changes))
        let body = Array(try JSONSerialization.data(withJSONObject: ["id_token": token, "access_token": "at", "token_type": "Bearer"]))
        http.tokenResponse = { _ in (200, body) }
    }

    func finish(_ trip: Trip, state: String?? = .none, cookie: String?? = .none, code: String? = "the-code", error: String? = nil,
                issuer: String? = nil, appleUser: String? = nil) throws -> FederatedSignIn.Return {
        let answer = FederatedSignIn.Answer(state: state ?? trip.trip.state, code: error == nil ? code : nil, error: error, issuer: issuer,
                                            appleUser: appleUser,
                                            cookie: cookie ?? trip.trip.cookie.value)
        return try federation.finish(answer, browser: SignInCompletion.Browser(cookieSecret: trip.pending.cookieSecret, address: address,
                                                                               userAgent: "Test/1"))
    }

    func link() throws -> FederatedIdentity? { try storage.read.federatedIdentities.find(issuer: F.issuer, subject: subject) }
    func userCount() throws -> Int64 { try harness.issuer.count("users") }
    func pendingWaits(_ trip: Trip) throws -> Bool { try harness.services.pendingAuthorizations.find(cookieSecret: trip.pending.cookieSecret) != nil }

    /// The refusal's result and detail; a failure for any other return.
    func refusal(_ returned: FederatedSignIn.Return, file: StaticString = #filePath, line: UInt = #line) -> (FederationResult, String?, String)? {
        guard case .refused(let result, _, let clientID, _, let detail) = returned else {
            XCTFail("not refused: \(returned)", file: file, line: line)
            return nil
        }
        return (result, clientID, detail)
    }

    // MARK: The trip out

    // RFC 7636 §4.3 (code_challenge, S256), OIDC Core §3.1.2.1 (nonce) and
    // RFC 6749 §4.1.1 (state); the state and binding stored only hashed.
    func testTheTripOutCarriesStateNonceAndS256Challenge() throws {
        let trip = try startTrip()
        let components = try XCTUnwrap(URLComponents(string: trip.location))
        XCTAssertEqual("\(components.scheme!)://\(components.host!)\(components.path)", F.endpoints.authorization)
        let query = Dictionary(uniqueKeysWithValues: (components.queryItems ?? []).map { ($0.name, $0.value ?? "") })
        XCTAssertEqual(query["state"], trip.trip.state)
        XCTAssertEqual(query["nonce"], trip.trip.nonce)
        XCTAssertEqual(query["code_challenge"], trip.trip.codeChallenge)
        XCTAssertEqual(query["code_challenge_method"], "S256")
        XCTAssertEqual(query["client_id"], F.clientID)
        XCTAssertEqual(query["response_type"], "code")
        XCTAssertEqual(query["redirect_uri"], harness.issuerOrigin + "/federation/callback")
        XCTAssertNil(query["code_verifier"])
        let rows = try harness.database.query("SELECT * FROM federation_requests").map { "\($0.values)" }.joined()
        XCTAssertEqual(try harness.issuer.count("federation_requests"), 1)
        for secret in [trip.trip.state, trip.trip.binding, trip.trip.codeVerifier, trip.trip.nonce, trip.pending.cookieSecret] {
            XCTAssertFalse(rows.contains(secret), "stored only hashed")
        }
        XCTAssertNil(try federation.start(provider: "nope", step: LoginStep(cookieSecret: trip.pending.cookieSecret, formToken: "f",
                                                                            address: address, clientID: "mobile-app-001")), "no such provider")
        XCTAssertNil(try federation.start(provider: "corp", step: LoginStep(cookieSecret: "gone", formToken: "f", address: address,
                                                                            clientID: "mobile-app-001")), "no such pending request")
    }

    // MARK: Accounts

    // OIDC Core §5.7: "The sub (subject) and iss (issuer) Claims, used
    // together, are the only Claims that an RP can rely upon as a stable
    // identifier for the End-User". An email_verified address nobody here
    // has makes a verified account, which has no password.
    func testAVerifiedNewAddressMakesAVerifiedAccountWithoutAPassword() throws {
        let trip = try startTrip()
        try provider(issues: ["amr": ["pwd", "mfa", "custom"]], for: trip)
        let users = try userCount()
        guard case .completed(let outcome, let user, let amr, let result) = try finish(trip) else { return XCTFail("not completed") }
        XCTAssertEqual(result, .created)
        XCTAssertEqual(amr, ["pwd", "mfa", "idp:corp"])
        guard case .signedIn(_, _, let request, _, let linked) = outcome else { return XCTFail("not signed in: \(outcome)") }
        XCTAssertEqual(request.clientID, "mobile-app-001")
        XCTAssertNil(linked)
        XCTAssertEqual(try userCount(), users + 1)
        let made = try XCTUnwrap(try harness.issuer.users.find(email: "jane@upstream.example"))
        XCTAssertEqual(made.id, user.id)
        XCTAssertTrue(made.emailVerified)
        XCTAssertEqual(made.passwordHash, "")
        XCTAssertFalse(made.hasPassword)
        XCTAssertEqual(made.name, "Jane Doe")
        XCTAssertEqual(made.roles, ["user"])
        XCTAssertEqual(try link()?.userID, made.id)
        XCTAssertEqual(try link()?.provider, "corp")
        XCTAssertFalse(try pendingWaits(trip), "the pending request is completed")

        // RFC 6749 §4.1.3, RFC 7636 §4.5 and §2.3.1's client_secret_basic.
        let post = try XCTUnwrap(http.posts.first)
        XCTAssertEqual(http.posts.count, 1)
        XCTAssertEqual(post.url, F.endpoints.token)
        let fields = Dictionary(uniqueKeysWithValues: post.fields)
        XCTAssertEqual(fields, ["grant_type": "authorization_code", "code": "the-code", "redirect_uri": harness.issuerOrigin + "/federation/callback",
                                "code_verifier": trip.trip.codeVerifier])
        XCTAssertEqual(post.headers.map(\.name), ["Authorization"])
        XCTAssertEqual(post.headers.first?.value, "Basic " + Data("\(F.clientID):s3cret".utf8).base64EncodedString())
    }

    func testALinkedAccountSignsInByIssuerAndSubjectAlone() throws {
        let alice = harness.alice
        try storage.write {
            try $0.federatedIdentities.insert(FederatedIdentity(issuer: F.issuer, subject: subject, userID: alice.id, provider: "corp",
                                                                email: alice.email, linkedAt: harness.clock.now - 100))
        }
        let users = try userCount()
        // The address the provider says now is irrelevant: another, or none verified.
        for changes: [String: Any?] in [["email": "renamed@upstream.example"], ["email_verified": false], ["email": nil]] {
            let trip = try startTrip()
            try provider(issues: changes, for: trip)
            guard case .completed(_, let user, _, let result) = try finish(trip) else { return XCTFail("not completed: \(changes)") }
            XCTAssertEqual(result, .success)
            XCTAssertEqual(user.id, alice.id)
        }
        XCTAssertEqual(try userCount(), users, "no account made")
        XCTAssertEqual(try link()?.lastUsedAt, harness.clock.now)
        XCTAssertNil(try harness.issuer.users.find(email: "renamed@upstream.example"))

        // Another subject at the same provider is not alice, even with her address... 
        let trip = try startTrip()
        try provider(issues: ["sub": subject + "0", "email": alice.email], for: trip)
        guard case .proveAccount = try finish(trip) else { return XCTFail("a subject that is not linked signed in") }

        // ...and a disabled account's link signs no one in.
        try storage.write { try $0.users.setDisabled(true, userID: alice.id) }
        let disabled = try startTrip()
        try provider(for: disabled)
        let refused = try XCTUnwrap(refusal(try finish(disabled)))
        XCTAssertEqual(refused.0, .disabled)
        XCTAssertTrue(try pendingWaits(disabled))
    }

    // An account here is not handed to whoever controls an upstream account
    // with its address: its owner must sign in to it in the same pending
    // request, and only then is the link made.
    func testAnExistingAddressOffersALinkAndLinksNothingUntilItsOwnerSignsIn() throws {
        let alice = harness.alice
        let trip = try startTrip()
        // SQLite's COLLATE NOCASE: the address in another case is still alice's.
        try provider(issues: ["email": alice.email.uppercased()], for: trip)
        let users = try userCount()
        guard case .proveAccount(let email, _, let clientID, let name) = try finish(trip) else { return XCTFail("no link offer") }
        XCTAssertEqual([email, clientID, name], [alice.email, "mobile-app-001", "corp"])
        XCTAssertNil(try link(), "nothing linked on the provider's word")
        XCTAssertEqual(try userCount(), users)
        XCTAssertTrue(try pendingWaits(trip), "the pending request waits for alice's own sign-in")

        // Alice signs in with her password in that pending request: linked now.
        let response = harness.submitLogin(trip.pending)
        XCTAssertEqual(response.status, 303)
        XCTAssertNotNil(response.locationQuery["code"])
        let made = try XCTUnwrap(try link())
        XCTAssertEqual(made.userID, alice.id)
        XCTAssertEqual(made.provider, "corp")
    }

    func testAnOfferIsNotTakenBySomeoneElsesSignIn() throws {
        let trip = try startTrip()
        try provider(issues: ["email": harness.alice.email], for: trip)
        guard case .proveAccount = try finish(trip) else { return XCTFail("no link offer") }
        // Bob (a fresh account) completes that pending request instead.
        let bob = try harness.issuer.users.add(email: "bob@example.com", name: "Bob", password: SignInHarness.password)
        XCTAssertEqual(harness.submitLogin(trip.pending, email: bob.email).status, 303)
        XCTAssertNil(try link(), "the offer was alice's only")
    }

    // No verified address and no link: nobody to sign in and nothing to make.
    func testNoVerifiedAddressMakesNothing() throws {
        for changes: [String: Any?] in [["email_verified": false], ["email_verified": "false"], ["email_verified": nil], ["email": nil]] {
            let trip = try startTrip()
            try provider(issues: changes, for: trip)
            let before = try harness.issuer.fullSnapshot()
            let refused = try XCTUnwrap(refusal(try finish(trip)))
            XCTAssertEqual(refused.0, .noVerifiedEmail, "\(changes)")
            XCTAssertEqual(refused.1, "mobile-app-001", "the login page again")
            XCTAssertEqual(try harness.issuer.fullSnapshot(), before, "\(changes): nothing made")
            XCTAssertNil(try harness.issuer.users.find(email: "jane@upstream.example"))
            XCTAssertNil(try link())
            XCTAssertTrue(try pendingWaits(trip))
        }
    }

    // MARK: The callback's state

    // RFC 6749 §10.12: "The binding value used for CSRF protection MUST
    // contain a non-guessable value ... The user-agent's authenticated state
    // ... MUST be kept in a location accessible only to the client and the
    // user-agent". Each state answers once.
    func testAStateIsUsedOnce() throws {
        let trip = try startTrip()
        try provider(for: trip)
        guard case .completed = try finish(trip) else { return XCTFail("the first answer signs in") }
        let users = try userCount()
        let again = try XCTUnwrap(refusal(try finish(trip)))
        XCTAssertEqual(again.0, .invalidState)
        XCTAssertEqual(again.2, "unknown, used or expired state")
        XCTAssertEqual(http.posts.count, 1, "a replayed answer never reaches the token endpoint")
        XCTAssertEqual(try userCount(), users)
    }

    // RFC 9207 §2.4 and RFC 9700 §4.4 (mix-up): an answer naming another
    // issuer never reaches this provider's token endpoint.
    func testAnAnswerNamingAnotherIssuerIsRefusedBeforeTheTokenCall() throws {
        let trip = try startTrip()
        try provider(for: trip)
        let refused = try XCTUnwrap(refusal(try finish(trip, issuer: "https://attacker.example")))
        XCTAssertEqual(refused.0, .providerError)
        XCTAssertEqual(http.posts.count, 0, "the code went nowhere")
        XCTAssertTrue(try pendingWaits(trip))
        let named = try startTrip()
        try provider(for: named)
        guard case .completed = try finish(named, issuer: F.issuer) else { return XCTFail("the provider's own iss is accepted") }
    }

    func testAnotherBrowsersAnswerSpendsTheStateAndSignsNoOneIn() throws {
        let cookies: [(Trip) -> String?] = [{ _ in nil }, { _ in "" }, { _ in "garbage" }, { _ in SecureRandom.token() + ".x" },
                                            // Another browser's binding with this request's form token.
                                            { SecureRandom.token() + "." + $0.trip.formToken }]
        for (index, makeCookie) in cookies.enumerated() {
            let trip = try startTrip()
            try provider(for: trip)
            let refused = try XCTUnwrap(refusal(try finish(trip, cookie: .some(makeCookie(trip)))))
            XCTAssertEqual(refused.0, .invalidState, "cookie \(index)")
            XCTAssertEqual(refused.2, "the binding cookie is another browser's", "cookie \(index)")
            XCTAssertNil(refused.1)
            // The right browser comes too late: the state is spent.
            XCTAssertEqual(refusal(try finish(trip))?.2, "unknown, used or expired state")
        }
        // The right binding with another pending request's form token.
        let trip = try startTrip()
        let forged = trip.trip.binding + "." + (try harness.startLogin()).formToken
        XCTAssertEqual(refusal(try finish(trip, cookie: .some(forged)))?.2, "the pending request is gone")
        XCTAssertEqual(http.posts.count, 0)
        XCTAssertNil(try link())
    }

    func testAMalformedOrExpiredStateIsRefused() throws {
        let trip = try startTrip()
        try provider(for: trip)
        for state: String? in [nil, "", "short", trip.trip.state + "=", SecureRandom.token()] {
            XCTAssertEqual(refusal(try finish(trip, state: .some(state)))?.0, .invalidState, String(describing: state))
        }
        // Ten minutes on, the trip (and the pending request) are gone.
        harness.clock.advance(FederationTrip.lifetime)
        XCTAssertEqual(refusal(try finish(trip))?.2, "unknown, used or expired state")
        XCTAssertEqual(http.posts.count, 0)
    }

    // MARK: The provider's answers

    // RFC 6749 §4.1.2.1: "access_denied: The resource owner or authorization
    // server denied the request." Apple says `user_cancelled_authorize`.
    func testCancellingAtTheProviderEndsTheRequestWithAccessDenied() throws {
        for error in ["access_denied", "user_cancelled_authorize"] {
            let trip = try startTrip()
            guard case .cancelled(let request, let name) = try finish(trip, error: error) else { return XCTFail("\(error): not cancelled") }
            XCTAssertEqual(request.clientID, "mobile-app-001")
            XCTAssertEqual(request.redirectURI, SignInHarness.customSchemeRedirect)
            XCTAssertEqual(name, "corp")
            XCTAssertFalse(try pendingWaits(trip), "\(error): the request is answered")
        }
        // Another error is the provider's failure: the login page again.
        let trip = try startTrip()
        let refused = try XCTUnwrap(refusal(try finish(trip, error: "server_error")))
        XCTAssertEqual(refused.0, .providerError)
        XCTAssertEqual(refused.1, "mobile-app-001")
        XCTAssertTrue(try pendingWaits(trip))
        XCTAssertEqual(http.posts.count, 0)
    }

    func testATokenEndpointRefusalOrABadIDTokenSignsNoOneIn() throws {
        let refusedCode = try startTrip()
        XCTAssertEqual(refusal(try finish(refusedCode))?.0, .tokenRefused, "400 invalid_grant")
        XCTAssertTrue(try pendingWaits(refusedCode))
        let noCode = try startTrip()
        XCTAssertEqual(refusal(try finish(noCode, code: nil))?.0, .providerError)
        XCTAssertEqual(refusal(try finish(try startTrip(), code: String(repeating: "c", count: 2049)))?.0, .providerError)

        let users = try userCount()
        for changes: [String: Any?] in [["nonce": "another"], ["aud": "another-client"], ["iss": F.issuer + "/"], ["exp": harness.clock.now - 61]] {
            let trip = try startTrip()
            try provider(issues: changes, for: trip)
            let refused = try XCTUnwrap(refusal(try finish(trip)))
            XCTAssertEqual(refused.0, .invalidIDToken, "\(changes)")
            XCTAssertTrue(try pendingWaits(trip))
        }
        // Another trip's nonce: the token was issued for a sign-in of another browser.
        let mine = try startTrip()
        let theirs = try startTrip()
        try provider(for: theirs)
        XCTAssertEqual(refusal(try finish(mine))?.0, .invalidIDToken)
        XCTAssertEqual(try userCount(), users)
        XCTAssertNil(try link())
    }

    // MARK: Apple's `user`

    // Apple, "Incorporating Sign in with Apple into other platforms": the
    // form_post's `user` is "A JSON string containing the data requested in
    // the scope property", `{"name": {"firstName", "lastName"}, "email"}`,
    // sent on the first sign-in only.
    func testApplesUserGivesADisplayName() {
        XCTAssertEqual(FederatedSignIn.appleName(#"{"name":{"firstName":"Jane","lastName":"Doe"},"email":"x@privaterelay.appleid.com"}"#), "Jane Doe")
        XCTAssertEqual(FederatedSignIn.appleName(#"{"name":{"firstName":"Jane"}}"#), "Jane")
        XCTAssertEqual(FederatedSignIn.appleName(#"{"name":{"lastName":"Doe"}}"#), "Doe")
        XCTAssertEqual(FederatedSignIn.appleName(#"{"name":{"firstName":"Ja\u0000ne","lastName":"D\noe\u0085"}}"#), "Jane Doe", "controls stripped")
        for malformed in ["", "null", "[]", "{", #"{"email":"x@privaterelay.appleid.com"}"#, #"{"name":{}}"#, #"{"name":"Jane Doe"}"#,
                          #"{"name":{"firstName":1}}"#, "Jane Doe"] {
            XCTAssertNil(FederatedSignIn.appleName(malformed), malformed)
        }
        let padding = String(repeating: " ", count: 4096)
        XCTAssertNil(FederatedSignIn.appleName(#"{"name":{"firstName":"Jane"}}"# + padding), "over 4096 bytes")
        XCTAssertEqual(FederatedSignIn.appleName(#"{"name":{"firstName":"Jane"}}"# + String(repeating: " ", count: 4096 - 29)), "Jane",
                       "4096 bytes")
    }

    // The name from Apple's unsigned `user` is only a display name, taken
    // when the ID token has none; never an address.
    func testApplesNameNamesANewAccountWhenTheTokenHasNone() throws {
        let trip = try startTrip()
        try provider(issues: ["name": nil], for: trip)
        let user = #"{"name":{"firstName":"Jane","lastName":"Appleseed"},"email":"victim@example.com"}"#
        guard case .completed(_, let made, _, _) = try finish(trip, appleUser: user) else { return XCTFail("not completed") }
        XCTAssertEqual(made.name, "Jane Appleseed")
        XCTAssertEqual(made.email, "jane@upstream.example")
        XCTAssertNil(try harness.issuer.users.find(email: "victim@example.com"))
        // Neither a name nor Apple's: the address's local part.
        let bare = try startTrip()
        try provider(issues: ["name": nil, "sub": "other-sub", "email": "june@upstream.example"], for: bare)
        guard case .completed(_, let june, _, _) = try finish(bare) else { return XCTFail("not completed") }
        XCTAssertEqual(june.name, "june")
    }

    // MARK: Apple's token request

    // Apple, "Generate and validate tokens": client_id and client_secret in
    // the body; the secret is an ES256 JWT (kid = the key id; iss = the team
    // id, sub = the client id, aud = https://appleid.apple.com).
    func testApplesTokenRequestCarriesASecretSignedWithTheTeamsKeyAndAReAddedProviderGetsItsOwn() throws {
        let apple = IdentityProviderRegistry.appleIssuer
        http.documents[apple + "/.well-known/openid-configuration"] = (200, Array(IdentityProviderRegistryTests.discovery(apple).utf8))
        func add(_ key: ES256PrivateKey) throws -> IdentityProvider {
            try harness.services.identityProviders.add(ProviderRegistration(
                name: "apple", preset: .apple, clientID: "com.example.sso", appleTeamID: "TEAM123456", appleKeyID: "KEY1234567",
                appleKeyPEM: try key.privateKeyPEM()), fetcher: http)
        }
        http.tokenResponse = { _ in (200, Array(#"{"id_token":"x.y.z"}"#.utf8)) }
        let first = try add(try ES256PrivateKey.generate())
        let trip = try startTrip()
        func secret(_ provider: IdentityProvider) throws -> [String: String] {
            _ = try federation.redeem(code: "c", provider: provider, trip: trip.trip)
            return Dictionary(uniqueKeysWithValues: try XCTUnwrap(http.posts.last).fields)
        }
        let sent = try secret(first)
        XCTAssertEqual(sent["client_id"], "com.example.sso")
        XCTAssertEqual(http.posts.last?.headers.count, 0, "no Basic credentials for Apple")
        let jwt = try XCTUnwrap(sent["client_secret"]).split(separator: ".").map(String.init)
        let header = try JSONSerialization.jsonObject(with: Data(try XCTUnwrap(Base64URL.decode(jwt[0])))) as? [String: Any]
        let claims = try JSONSerialization.jsonObject(with: Data(try XCTUnwrap(Base64URL.decode(jwt[1])))) as? [String: Any]
        XCTAssertEqual(header?["alg"] as? String, "ES256")
        XCTAssertEqual(header?["kid"] as? String, "KEY1234567")
        XCTAssertEqual(claims?["iss"] as? String, "TEAM123456")
        XCTAssertEqual(claims?["sub"] as? String, "com.example.sso")
        XCTAssertEqual(claims?["aud"] as? String, "https://appleid.apple.com")
        XCTAssertEqual(try secret(first)["client_secret"], sent["client_secret"], "made once, kept until an hour before it expires")
        XCTAssertTrue(try harness.services.identityProviders.remove(name: "apple"))
        let second = try add(try ES256PrivateKey.generate())
        XCTAssertNotEqual(try secret(second)["client_secret"], sent["client_secret"], "a provider added again signs with its new key at once")
    }
}
