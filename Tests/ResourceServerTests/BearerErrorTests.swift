import XCTest
@testable import ResourceServer
@testable import SSOCore

final class BearerErrorTests: XCTestCase {
    func error(_ code: BearerError.Code, _ description: String = "why") -> BearerError {
        BearerError(code, description, detail: "log only", realm: "https://api.example", requiredScope: "api:serverA")
    }

    func testStatusPerCode() {
        let unauthorized: [BearerError.Code] = [.missingToken, .malformedToken, .tokenExpired, .invalidSignature,
                                                .unknownSigningKey, .invalidIssuer]
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

    func testLogDetailIsCodeAndDetail() {
        XCTAssertEqual(error(.tokenExpired).logDetail, "token_expired: log only")
        XCTAssertFalse(String(decoding: error(.tokenExpired).response.body, as: UTF8.self).contains("log only"))
    }
}
