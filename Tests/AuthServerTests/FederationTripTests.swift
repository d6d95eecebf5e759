import Foundation
import XCTest
@testable import AuthServer
import SSOCore

/// `FederationTrip`: the random values of one browser's trip to an upstream
/// provider, what is derived from them, and the cookie that brings the
/// binding back.
final class FederationTripTests: XCTestCase {
    // RFC 7636 §4.1: "code_verifier = high-entropy cryptographic random
    // STRING using the unreserved characters ... with a minimum length of 43
    // characters and a maximum length of 128 characters"; §4.2: "S256
    // code_challenge = BASE64URL-ENCODE(SHA256(ASCII(code_verifier)))".
    func testTheVerifierIsA43CharacterBase64URLStringAndTheChallengeItsS256() throws {
        for _ in 0..<20 {
            let trip = FederationTrip.start(formToken: "form")
            let verifier = trip.codeVerifier
            XCTAssertEqual(verifier.utf8.count, 43)
            XCTAssertEqual(Base64URL.decode(verifier[...])?.count, 32, "256 bits")
            XCTAssertTrue(PKCE.isValidVerifier(verifier))
            XCTAssertEqual(trip.codeChallenge, PKCE.s256Challenge(verifier: verifier))
            XCTAssertEqual(trip.codeChallenge, Base64URL.encode(SHA256.hash(Array(verifier.utf8))))
            XCTAssertTrue(PKCE.isValidS256Challenge(trip.codeChallenge))
            XCTAssertTrue(FederationTrip.isWellFormed(state: trip.state), "the issuer's own state is well formed")
            XCTAssertEqual(trip.formToken, "form")
        }
    }

    // OIDC Core §15.5.2: "a cryptographically random value is stored in the
    // session and its hash is passed as the nonce". The nonce and the
    // verifier are derived under their own labels, so neither gives the other.
    func testTheNonceAndVerifierAreDistinctAndFollowTheBindingAndState() throws {
        let trip = FederationTrip.start(formToken: "form")
        XCTAssertNotEqual(trip.nonce, trip.codeVerifier)
        XCTAssertNotEqual(trip.nonce, trip.codeChallenge)
        XCTAssertNotEqual(trip.binding, trip.state)
        let again = FederationTrip(state: trip.state, binding: trip.binding, formToken: "another form")
        XCTAssertEqual([again.nonce, again.codeVerifier], [trip.nonce, trip.codeVerifier], "derived from state and binding only")
        let otherBinding = FederationTrip(state: trip.state, binding: SecureRandom.token(), formToken: "form")
        let otherState = FederationTrip(state: SecureRandom.token(), binding: trip.binding, formToken: "form")
        let swapped = FederationTrip(state: trip.binding, binding: trip.state, formToken: "form")
        for other in [otherBinding, otherState, swapped] {
            XCTAssertNotEqual(other.nonce, trip.nonce)
            XCTAssertNotEqual(other.codeVerifier, trip.codeVerifier)
        }
        let trips = (0..<50).map { _ in FederationTrip.start(formToken: "form") }
        XCTAssertEqual(Set(trips.map(\.state)).count, 50)
        XCTAssertEqual(Set(trips.map(\.binding)).count, 50)
        XCTAssertEqual(Set(trips.map(\.nonce)).count, 50)
    }

    // RFC 6265bis §4.1.2.7: "SameSite=None" needs "Secure"; Apple's
    // form_post returns as a cross-site POST, which carries no Lax cookie.
    func testTheCookieIsSecureHttpOnlySameSiteNoneUnderFederation() throws {
        let trip = FederationTrip.start(formToken: "tok")
        let header = trip.cookie.headerValue
        XCTAssertEqual(header, "gh_federation=\(trip.binding).tok; Path=/federation; Secure; HttpOnly; SameSite=None; Max-Age=600")
        let parsed = try XCTUnwrap(ParsedSetCookie(header))
        XCTAssertEqual(parsed.name, FederationTrip.cookieName)
        XCTAssertEqual(parsed.path, "/federation")
        XCTAssertTrue(parsed.isSecure)
        XCTAssertTrue(parsed.isHttpOnly)
        XCTAssertEqual(parsed.sameSite, "None")
        XCTAssertNil(parsed.domain, "host-only")
        XCTAssertEqual(parsed.maxAge, Int(FederationTrip.lifetime))
        let expired = try XCTUnwrap(ParsedSetCookie(FederationTrip.expiredCookie.headerValue))
        XCTAssertEqual([expired.name, expired.value, expired.path, expired.sameSite], ["gh_federation", "", "/federation", "None"])
        XCTAssertEqual(expired.maxAge, 0)
        XCTAssertTrue(expired.isSecure && expired.isHttpOnly)
    }

    func testTheReturningTripIsTheStateAndTheCookie() throws {
        let trip = FederationTrip.start(formToken: SecureRandom.token())
        let back = try XCTUnwrap(FederationTrip.returning(state: trip.state, cookie: trip.cookie.value))
        XCTAssertEqual([back.state, back.binding, back.formToken], [trip.state, trip.binding, trip.formToken])
        XCTAssertEqual([back.nonce, back.codeVerifier], [trip.nonce, trip.codeVerifier])
    }

    // RFC 6749 §10.12: "The client MUST implement CSRF protection for its
    // redirection URI ... by requiring any request sent to the redirection
    // URI endpoint to include a value that binds the request to the
    // user-agent's authenticated state". Missing or malformed: no trip.
    func testAMissingOrMalformedCookieIsNoTrip() {
        let state = SecureRandom.token()
        let binding = SecureRandom.token()
        for cookie: String? in [nil, "", binding, ".", binding + ".", "." + binding, binding + ".a.b", binding + "..a",
                                binding + "." + String(repeating: "a", count: 300 - binding.utf8.count)] {
            XCTAssertNil(FederationTrip.returning(state: state, cookie: cookie), "cookie \(String(describing: cookie))")
        }
        let longest = binding + "." + String(repeating: "a", count: 300 - binding.utf8.count - 1)
        XCTAssertEqual(longest.utf8.count, 300)
        XCTAssertNotNil(FederationTrip.returning(state: state, cookie: longest), "300 bytes is the most")
    }

    // RFC 6749 §4.1.2: state is "REQUIRED if the "state" parameter was present
    // in the client authorization request"; this issuer's are 43 characters
    // of base64url, so anything not base64url of 16 to 128 characters is not one.
    func testAMalformedStateIsNoTrip() {
        let cookie = SecureRandom.token() + ".form"
        for state: String? in [nil, "", "abc", String(repeating: "a", count: 15), String(repeating: "a", count: 129), SecureRandom.token() + "=",
                               SecureRandom.token() + "+", "AAAAAAAAAAAAAAAA AAAA", String(repeating: "a", count: 17), "ÄAAAAAAAAAAAAAAAAAAA",
                               SecureRandom.token() + "\u{0}"] {
            XCTAssertNil(FederationTrip.returning(state: state, cookie: cookie), "state \(String(describing: state))")
            if let state { XCTAssertFalse(FederationTrip.isWellFormed(state: state), state.debugDescription) }
        }
        for good in [String(repeating: "A", count: 16), String(repeating: "_", count: 128), SecureRandom.token()] {
            XCTAssertTrue(FederationTrip.isWellFormed(state: good), good)
            XCTAssertNotNil(FederationTrip.returning(state: good, cookie: cookie), good)
        }
    }
}
