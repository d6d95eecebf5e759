import XCTest
@testable import ResourceServer
@testable import SSOCore

final class BearerErrorTests: XCTestCase {
    func error(_ code: BearerError.Code, _ description: String = "why") -> BearerError {
        BearerError(code, description, detail: "log only", realm: "https://api.example", requiredScope: "api:serverA")
    }

    func testStatusPerCode() {
        let unauthorized: [BearerError.Code] = [.missingToken, .malformedToken, .tokenExpired, .invalidSignature,
                                                .unknownSigningKey, .invalidIssuer, .tokenRequiresDPoP, .tokenNotDPoPBound,
                                                .invalidDPoPProof, .dpopKeyMismatch, .useDPoPNonce]
        for code in unauthorized { XCTAssertEqual(error(code).status, 401, code.rawValue) }
        XCTAssertEqual(error(.invalidAudience).status, 403)
        XCTAssertEqual(error(.insufficientScope).status, 403)
    }

    func testChallengeValuesEscapeNothingUnsafe() {
        let hostile = error(.malformedToken, "quote \" backslash \\ newline \n é")
        XCTAssertEqual(hostile.challenge,
                       "Bearer realm=\"https://api.example\", error=\"invalid_token\", error_description=\"quote ? backslash ? newline ? ??\"")
        XCTAssertTrue(Response.isSafeHeader(name: "WWW-Authenticate", value: hostile.challenge))
    }

    func testDPoPCodesAre401AndAnsweredInTheDPoPScheme() {
        let challenges: [(BearerError.Code, String)] = [
            (.invalidDPoPProof, "invalid_dpop_proof"), (.useDPoPNonce, "use_dpop_nonce"), (.dpopKeyMismatch, "invalid_token"),
            (.tokenRequiresDPoP, "invalid_token"), (.tokenNotDPoPBound, "invalid_token"),
        ]
        for (code, challengeError) in challenges {
            XCTAssertEqual(error(code).status, 401, code.rawValue)
            // Whatever scheme the request used: these are DPoP matters.
            XCTAssertEqual(error(code).challenges,
                           ["DPoP realm=\"https://api.example\", error=\"\(challengeError)\", error_description=\"why\", algs=\"ES256 EdDSA RS256\""])
        }
        var expired = error(.tokenExpired)
        expired.scheme = .dpop
        XCTAssertEqual(expired.challenges,
                       ["DPoP realm=\"https://api.example\", error=\"invalid_token\", error_description=\"why\", algs=\"ES256 EdDSA RS256\""])
    }

    func testAMissingTokenOffersBothSchemesInTwoFieldsAndTheNonceRidesAlong() {
        var missing = error(.missingToken)
        missing.dpopNonce = "n-1"
        let response = missing.response
        XCTAssertEqual(response.headers.filter { $0.name == "WWW-Authenticate" }.map(\.value),
                       ["Bearer realm=\"https://api.example\"", "DPoP realm=\"https://api.example\", algs=\"ES256 EdDSA RS256\""])
        XCTAssertEqual(response.headers.filter { $0.name == "DPoP-Nonce" }.map(\.value), ["n-1"])
        XCTAssertNil(error(.missingToken).response.header("DPoP-Nonce"))
    }

    func testBothSchemesAreParsedAndBearerAloneStaysBearer() {
        XCTAssertEqual(AccessTokenCredentials.extract(fromAuthorization: "DPoP abc.def"), .token(.dpop, "abc.def"))
        XCTAssertEqual(AccessTokenCredentials.extract(fromAuthorization: "dPoP   abc"), .token(.dpop, "abc"))
        XCTAssertEqual(AccessTokenCredentials.extract(fromAuthorization: "bearer abc"), .token(.bearer, "abc"))
        XCTAssertEqual(AccessTokenCredentials.extract(fromAuthorization: "DPoP "), .malformed(.dpop, "DPoP scheme without a token"))
        XCTAssertEqual(AccessTokenCredentials.extract(fromAuthorization: "DPoP a,b"), .malformed(.dpop, "token has characters outside token68"))
        XCTAssertEqual(AccessTokenCredentials.extract(fromAuthorization: "DPoPabc"), .absent)
        XCTAssertEqual(AccessTokenCredentials.extract(fromAuthorization: "Basic abc"), .absent)
        XCTAssertEqual(BearerCredentials.extract(fromAuthorization: "DPoP abc"), .absent, "to a Bearer-only reader, DPoP is another scheme")
        XCTAssertEqual(BearerCredentials.extract(fromAuthorization: "Bearer a b"), .malformed("token has characters outside b64token"))
    }

    func testLogDetailIsCodeAndDetail() {
        XCTAssertEqual(error(.tokenExpired).logDetail, "token_expired: log only")
        XCTAssertFalse(String(decoding: error(.tokenExpired).response.body, as: UTF8.self).contains("log only"))
    }
}
