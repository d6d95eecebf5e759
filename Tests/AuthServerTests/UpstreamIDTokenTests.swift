import Foundation
import XCTest
@testable import AuthServer
import IssuerStorage
import SSOCore

/// `UpstreamIDToken.verify`: every refusal of OpenID Connect Core 1.0
/// §3.1.3.7 ("ID Token Validation") and the issuer's own checks, one at a
/// time, each against a token that is otherwise good and really signed
/// (RS256 with an RSA key, ES256 with a P-256 key).
final class UpstreamIDTokenTests: XCTestCase {
    typealias F = UpstreamFixture
    let now: Int64 = 1_800_000_000
    let nonce = "n-0S6_WzA2Mj"

    func claims(_ changes: [String: Any?] = [:]) -> [String: Any] { F.claims(now: now, nonce: nonce, changes) }

    func verify(_ token: String, provider: IdentityProvider = F.provider(), nonce: String? = nil, at time: Int64? = nil) throws -> UpstreamIdentity {
        try UpstreamIDToken.verify(token, provider: provider, nonce: nonce ?? self.nonce, now: time ?? now, keys: F.lookUp)
    }

    /// The token is refused with an `UpstreamIDTokenError` that says `because`.
    func assertRefused(_ token: String, provider: IdentityProvider = F.provider(), at time: Int64? = nil, because: String, _ what: String,
                       file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try verify(token, provider: provider, at: time), what, file: file, line: line) { error in
            guard let refusal = error as? UpstreamIDTokenError else {
                return XCTFail("\(what): \(error) is not an UpstreamIDTokenError", file: file, line: line)
            }
            XCTAssertTrue(refusal.description.contains(because), "\(what): \(refusal) should say \(because)", file: file, line: line)
        }
    }

    func assertAccepted(_ token: String, provider: IdentityProvider = F.provider(), at time: Int64? = nil, _ what: String,
                        file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertNoThrow(try verify(token, provider: provider, at: time), what, file: file, line: line)
    }

    // MARK: A good token

    func testAGoodTokenSignedWithEitherKeyGivesWhoSignedIn() throws {
        for token in [try F.rs256(claims()), try F.es256(claims())] {
            let identity = try verify(token)
            XCTAssertEqual(identity, UpstreamIdentity(issuer: F.issuer, subject: "248289761001", verifiedEmail: "jane@upstream.example",
                                                      name: "Jane Doe", amr: [], isPrivateEmail: false))
        }
        // RFC 7515 §4.1.9: typ is optional, and `application/jwt` is `JWT`.
        assertAccepted(try F.rs256(claims(), header: ["typ": "application/jwt"]), "typ application/jwt")
        assertAccepted(try F.token(header: ["alg": "RS256", "kid": F.rsaKID], claims: claims(), signer: .rs256(F.rsa)), "no typ")
    }

    // MARK: The signature (§3.1.3.7 steps 6-8, RFC 8725)

    // §3.1.3.7 step 6: "the Client MUST validate the signature of all other
    // ID Tokens according to JWS [JWS] using the algorithm specified in the
    // JWT alg Header Parameter. The Client MUST use the keys provided by the
    // Issuer."
    func testABadSignatureIsRefused() throws {
        let stranger = try RSAKey.generate()
        let forged = try F.token(header: ["alg": "RS256", "kid": F.rsaKID], claims: claims(), signer: .rs256(stranger))
        assertRefused(forged, because: "signature: invalidSignature", "signed by another RSA key under the provider's kid")
        let otherCurve = try F.token(header: ["alg": "ES256", "kid": F.ecKID], claims: claims(), signer: .es256(try ES256PrivateKey.generate()))
        assertRefused(otherCurve, because: "signature: invalidSignature", "signed by another P-256 key under the provider's kid")
        // A good token whose claims were changed after signing.
        let good = try F.rs256(claims()).split(separator: ".")
        let swapped = Base64URL.encode(Array(try JSONSerialization.data(withJSONObject: claims(["sub": "admin"]))))
        assertRefused([good[0], Substring(swapped), good[2]].joined(separator: "."), because: "signature: invalidSignature", "claims swapped")
        assertRefused(try F.token(header: ["alg": "RS256", "kid": F.rsaKID], claims: claims(), signer: .bytes([])), because: "signature:",
                      "an empty signature")
    }

    // RFC 8725 §3.1: "Libraries MUST enable the caller to specify a supported
    // set of algorithms and MUST NOT use any other algorithms when performing
    // cryptographic operations." The set here is RS256 and ES256.
    func testAlgorithmsOutsideThePinnedSetAreRefused() throws {
        let publicPEM = try F.rsa.publicKeyPEM()
        let signers: [(String, F.Signer)] = [("none", .bytes([])), ("HS256", .hs256(publicPEM)), ("PS256", .rs256(F.rsa)),
                                             ("EdDSA", .bytes([UInt8](repeating: 7, count: 64))), ("RS512", .rs256(F.rsa)), ("rs256", .rs256(F.rsa))]
        for (alg, signer) in signers {
            let token = try F.token(header: ["alg": alg, "kid": F.rsaKID, "typ": "JWT"], claims: claims(), signer: signer)
            assertRefused(token, because: "signature: unsupportedAlgorithm", "alg \(alg)")
        }
        // The `none` attack really has no signature part's content; still refused.
        let none = try F.token(header: ["alg": "none"], claims: claims(), signer: .bytes([]))
        assertRefused(none, because: "signature: unsupportedAlgorithm", "alg none without a kid")
        // RFC 8725 §3.1's key confusion: a key is used with its own algorithm only.
        let esUnderRSAKid = try F.token(header: ["alg": "ES256", "kid": F.rsaKID], claims: claims(), signer: .es256(F.p256))
        assertRefused(esUnderRSAKid, because: "signature: invalidSignature", "ES256 under the RSA key's kid")
        let rsUnderECKid = try F.token(header: ["alg": "RS256", "kid": F.ecKID], claims: claims(), signer: .rs256(F.rsa))
        assertRefused(rsUnderECKid, because: "signature: invalidSignature", "RS256 under the P-256 key's kid")
    }

    // RFC 7515 §4.1.11: "If any of the listed extension Header Parameters are
    // not understood and supported by the recipient, then the JWS is invalid."
    func testACritHeaderIsRefused() throws {
        for crit: Any in [["exp"], [String](), NSNull(), "b64"] {
            assertRefused(try F.rs256(claims(), header: ["crit": crit, "exp": 1]), because: "signature: criticalHeader", "crit \(crit)")
        }
    }

    // §3.1.3.7 step 6: "The Client MUST use the keys provided by the Issuer";
    // RFC 7515 §4.1.4: kid "is a hint indicating which key was used".
    func testAKidTheProviderDidNotPublishIsRefused() throws {
        assertRefused(try F.rs256(claims(), header: ["kid": "rsa-2025"]), because: "signature: unknownKey", "an unknown kid")
        assertRefused(try F.rs256(claims(), header: ["kid": F.rsaKID + "\u{0}"]), because: "signature: unknownKey", "a kid with a NUL")
        assertRefused(try F.token(header: ["alg": "RS256"], claims: claims(), signer: .rs256(F.rsa)), because: "signature: missingKeyID", "no kid")
        // RFC 8725 §3.10: keys named in the token itself are never used.
        let (n, e) = try F.rsa.publicComponents()
        let embedded = try F.rs256(claims(), header: ["kid": "attacker", "jwk": ["kty": "RSA", "n": Base64URL.encode(n), "e": Base64URL.encode(e)],
                                                      "jku": "https://attacker.example/jwks"])
        assertRefused(embedded, because: "signature: unknownKey", "a key in the header")
    }

    // MARK: The issuer (§3.1.3.7 step 2)

    // Step 2: "The Issuer Identifier for the OpenID Provider (which is
    // typically obtained during Discovery) MUST exactly match the value of
    // the iss (issuer) Claim."
    func testTheIssuerMustMatchExactly() throws {
        for iss in [F.issuer + "/", "https://ID.upstream.example", "http://id.upstream.example", "https://id.upstream.example.attacker.example",
                    "https://id.upstream.exampl", F.issuer + "\u{0}", " " + F.issuer, ""] {
            assertRefused(try F.rs256(claims(["iss": iss])), because: "iss is not the provider's", "iss \(iss.debugDescription)")
        }
        assertRefused(try F.rs256(claims(["iss": nil])), because: "iss is not the provider's", "no iss")
        // A provider registered with the trailing slash takes exactly that.
        assertRefused(try F.rs256(claims()), provider: F.provider(issuer: F.issuer + "/"), because: "iss is not the provider's",
                      "a provider whose issuer ends in /")
        assertAccepted(try F.rs256(claims(["iss": F.issuer + "/"])), provider: F.provider(issuer: F.issuer + "/"), "both with the slash")
    }

    // MARK: The audience (§3.1.3.7 steps 3-5)

    // Step 3: "The Client MUST validate that the aud (audience) Claim
    // contains its client_id value registered at the Issuer identified by
    // the iss (issuer) Claim as an audience. ... The ID Token MUST be
    // rejected if the ID Token does not list the Client as a valid audience".
    func testTheAudienceMustNameThisClient() throws {
        assertRefused(try F.rs256(claims(["aud": nil])), because: "aud does not name", "no aud")
        for aud: Any in ["another-client", F.clientID.uppercased(), F.clientID + " ", [String](), ["another-client"], ["a", "b"]] {
            assertRefused(try F.rs256(claims(["aud": aud])), because: "aud does not name", "aud \(aud)")
        }
        assertAccepted(try F.rs256(claims(["aud": [F.clientID]])), "an array of only this client")
        assertAccepted(try F.rs256(claims(["aud": ["https://api.upstream.example", F.clientID], "azp": F.clientID])),
                       "an array containing this client, with azp")
    }

    // Step 4: "If the ID Token contains multiple audiences, the Client SHOULD
    // verify that an azp Claim is present."
    func testSeveralAudiencesNeedAnAzp() throws {
        assertRefused(try F.rs256(claims(["aud": [F.clientID, "https://api.upstream.example"]])), because: "several audiences and no azp",
                      "two audiences, no azp")
    }

    // Step 5: "If an azp (authorized party) Claim is present, the Client
    // SHOULD verify that its client_id is the Claim Value."
    func testAnAzpOfAnotherClientIsRefused() throws {
        assertRefused(try F.rs256(claims(["azp": "another-client"])), because: "azp is another client", "one audience, azp of another")
        assertRefused(try F.rs256(claims(["aud": [F.clientID, "another-client"], "azp": "another-client"])), because: "azp is another client",
                      "two audiences, azp of the other")
        assertAccepted(try F.rs256(claims(["azp": F.clientID])), "azp of this client")
    }

    // MARK: The time window (§3.1.3.7 steps 9-10)

    // Step 9: "The current time MUST be before the time represented by the
    // exp Claim (possibly allowing for some small leeway to account for
    // clock skew)."
    func testAnExpiredTokenIsRefusedBeyondTheLeeway() throws {
        let leeway = Int64(UpstreamIDToken.leeway)
        XCTAssertEqual(leeway, 60)
        assertRefused(try F.rs256(claims(["exp": now - leeway])), because: "time window: expired", "exp 60 s ago")
        assertRefused(try F.rs256(claims(["exp": now - 3600, "iat": now - 3900])), because: "time window: expired", "exp an hour ago")
        assertAccepted(try F.rs256(claims(["exp": now - leeway + 1])), "exp 59 s ago: within the leeway")
        assertAccepted(try F.rs256(claims(["exp": now])), "exp now: within the leeway")
        assertRefused(try F.rs256(claims(["exp": nil])), because: "exp or iat missing", "no exp")
    }

    // Step 10: "The iat Claim can be used to reject tokens that were issued
    // too far away from the current time, limiting the amount of time that
    // nonces need to be stored to prevent attacks."
    func testIssuedAtMustBeNearNow() throws {
        let leeway = Int64(UpstreamIDToken.leeway)
        let oldest = Int64(UpstreamIDToken.oldestIssuedAt)
        XCTAssertEqual(oldest, 600)
        assertRefused(try F.rs256(claims(["iat": nil])), because: "exp or iat missing", "no iat")
        assertRefused(try F.rs256(claims(["iat": now + leeway + 1])), because: "time window: issuedInFuture", "iat 61 s ahead")
        assertRefused(try F.rs256(claims(["iat": now + 86_400, "exp": now + 90_000])), because: "time window: issuedInFuture", "iat a day ahead")
        assertAccepted(try F.rs256(claims(["iat": now + leeway])), "iat 60 s ahead: within the leeway")
        assertRefused(try F.rs256(claims(["iat": now - oldest - leeway - 1])), because: "issued too long ago", "iat 661 s ago")
        assertRefused(try F.rs256(claims(["iat": now - 86_400])), because: "issued too long ago", "iat a day ago, exp still ahead")
        assertAccepted(try F.rs256(claims(["iat": now - oldest - leeway])), "iat 660 s ago: the oldest accepted")
        // NumericDate may be fractional (RFC 7519 §2).
        assertAccepted(try F.rs256(claims(["iat": Double(now) - 0.5, "exp": Double(now) + 299.5])), "fractional times")
    }

    // MARK: The nonce (§3.1.3.7 step 11)

    // Step 11: "If a nonce value was sent in the Authentication Request, a
    // nonce Claim MUST be present and its value checked to verify that it is
    // the same value as the one that was sent in the Authentication Request."
    func testTheNonceMustBeThisSignInsOwn() throws {
        assertRefused(try F.rs256(claims(["nonce": nil])), because: "nonce is not this sign-in's", "no nonce")
        for other in ["", "n-0S6_WzA2M", nonce + "j", nonce.uppercased(), nonce + "\u{0}", FederationTrip.start(formToken: "f").nonce] {
            assertRefused(try F.rs256(claims(["nonce": other])), because: "nonce is not this sign-in's", "nonce \(other.debugDescription)")
        }
    }

    // MARK: The subject (§2)

    // §2 sub: "A locally unique and never reassigned identifier within the
    // Issuer for the End-User ... It MUST NOT exceed 255 ASCII [RFC20]
    // characters in length. The sub value is a case-sensitive string."
    func testTheSubjectMustBeOneTo255PrintableASCIICharacters() throws {
        assertRefused(try F.rs256(claims(["sub": nil])), because: "sub missing", "no sub")
        for sub in ["", String(repeating: "a", count: 256), "a b", "a\u{0}b", "a\tb", "abc\n", "\u{7F}", "jäne"] {
            assertRefused(try F.rs256(claims(["sub": sub])), because: "sub missing, too long or not printable ASCII", "sub \(sub.debugDescription)")
        }
        let longest = String(repeating: "a", count: 255)
        XCTAssertEqual(try verify(F.rs256(claims(["sub": longest]))).subject, longest, "255 characters")
        XCTAssertEqual(try verify(F.rs256(claims(["sub": "001.Ab~|!"]))).subject, "001.Ab~|!", "any printable ASCII, as sent")
    }

    // MARK: Google's hosted domain

    // Google, "Authenticate with a backend server": "verify that the hd claim
    // matches your domain" (the hd request parameter only narrows the chooser).
    func testAHostedDomainIsRequiredWhenConfigured() throws {
        let workspace = F.provider(hostedDomain: "example.com")
        assertRefused(try F.rs256(claims()), provider: workspace, because: "hd is not example.com", "no hd (a consumer account)")
        for hd in ["other.com", "EXAMPLE.com", "example.com.", "sub.example.com", ""] {
            assertRefused(try F.rs256(claims(["hd": hd])), provider: workspace, because: "hd is not example.com", "hd \(hd.debugDescription)")
        }
        assertAccepted(try F.rs256(claims(["hd": "example.com"])), provider: workspace, "hd example.com")
        assertAccepted(try F.rs256(claims(["hd": "other.com"])), "no hosted domain configured: hd is not read")
    }

    // MARK: What is taken from the claims

    // OIDC Core §5.1 email_verified: "True if the End-User's e-mail address
    // has been verified; otherwise false." Apple sends the strings "true"
    // and "false" ("Authenticating users with Sign in with Apple").
    func testOnlyAVerifiedAddressIsTaken() throws {
        for verified: Any in [true, "true"] {
            XCTAssertEqual(try verify(F.rs256(claims(["email_verified": verified]))).verifiedEmail, "jane@upstream.example", "\(verified)")
        }
        for unverified: Any? in [false, "false", nil, "TRUE", "yes", 1, NSNull()] {
            XCTAssertNil(try verify(F.rs256(claims(["email_verified": unverified]))).verifiedEmail, "email_verified \(String(describing: unverified))")
        }
        // Not an address at all, or not one to send mail to: not taken even when "verified".
        for email in ["jane", "jane doe@upstream.example", "jane@upstream.example\r\nBcc: x@y", String(repeating: "a", count: 250) + "@x.io", ""] {
            XCTAssertNil(try verify(F.rs256(claims(["email": email]))).verifiedEmail, "email \(email.debugDescription)")
        }
        XCTAssertNil(try verify(F.rs256(claims(["email": nil]))).verifiedEmail, "no email")
    }

    // Apple: "is_private_email: A String or Boolean value that indicates
    // whether the email that the user shares is the proxy address."
    func testApplesPrivateRelayFlag() throws {
        let relay = "x1y2z3@privaterelay.appleid.com"
        for flag: Any in ["true", true] {
            let identity = try verify(F.rs256(claims(["email": relay, "email_verified": "true", "is_private_email": flag])))
            XCTAssertTrue(identity.isPrivateEmail, "\(flag)")
            XCTAssertEqual(identity.verifiedEmail, relay)
        }
        for flag: Any? in ["false", false, nil, "1"] {
            XCTAssertFalse(try verify(F.rs256(claims(["is_private_email": flag]))).isPrivateEmail, String(describing: flag))
        }
    }

    // RFC 8176 §2: "The following is a list of Authentication Method
    // Reference values defined by this specification"; an upstream's own
    // values are not passed on to this issuer's clients.
    func testOnlyRegisteredAuthenticationMethodsAreKept() throws {
        XCTAssertEqual(try verify(F.rs256(claims(["amr": ["pwd", "mfa", "custom"]]))).amr, ["pwd", "mfa"])
        XCTAssertEqual(try verify(F.rs256(claims(["amr": ["hwk", "user", "PWD", "pwd ", "federated"]]))).amr, ["hwk", "user"])
        XCTAssertEqual(try verify(F.rs256(claims(["amr": [String]()]))).amr, [])
        XCTAssertEqual(try verify(F.rs256(claims(["amr": nil]))).amr, [])
        XCTAssertEqual(try verify(F.rs256(claims(["amr": Array(repeating: "otp", count: 20)]))).amr.count, 8, "at most eight")
    }

    // OIDC Core §5.1: name, "End-User's full name in displayable form
    // including all name parts"; given_name and family_name are its parts.
    func testTheNameIsTheNameClaimOrItsParts() throws {
        XCTAssertEqual(try verify(F.rs256(claims(["name": nil, "given_name": "Jane", "family_name": "Doe"]))).name, "Jane Doe")
        XCTAssertEqual(try verify(F.rs256(claims(["name": nil, "given_name": "Jane"]))).name, "Jane")
        XCTAssertEqual(try verify(F.rs256(claims(["name": nil, "family_name": "Doe"]))).name, "Doe")
        XCTAssertNil(try verify(F.rs256(claims(["name": nil]))).name)
        XCTAssertEqual(try verify(F.rs256(claims(["name": "J. Doe", "given_name": "Jane", "family_name": "Doe"]))).name, "J. Doe", "name first")
    }

    func testControlCharactersAreStrippedFromTheName() throws {
        XCTAssertEqual(try verify(F.rs256(claims(["name": "Jane\u{0}\r\n\tDoe\u{7F}\u{85}\u{9F}"]))).name, "JaneDoe")
        XCTAssertEqual(try verify(F.rs256(claims(["name": nil, "given_name": "Ja\u{1B}[31mne", "family_name": "D\u{0}oe"]))).name, "Ja[31mne Doe")
        XCTAssertEqual(try verify(F.rs256(claims(["name": "Zoë Ö\u{A0}Ünal 李"]))).name, "Zoë Ö\u{A0}Ünal 李", "other characters kept")
        XCTAssertEqual(try verify(F.rs256(claims(["name": String(repeating: "é", count: 300)]))).name, String(repeating: "é", count: 200),
                       "at most 200 characters")
    }
}
