import XCTest
@testable import SQLiteClient
@testable import SSOCore

final class FormParserTests: XCTestCase {
    func testDecodesPlusPercentAndUTF8() throws {
        let form = try FormParser.parse(Array("a=1+2&b=%C3%A9t%C3%A9&c=&d&e=x%3Dy".utf8))
        XCTAssertEqual(try form.single("a"), "1 2")
        XCTAssertEqual(try form.single("b"), "été")
        XCTAssertNil(try form.single("c"), "empty value counts as omitted (RFC 6749 §3.1)")
        XCTAssertNil(try form.single("d"))
        XCTAssertEqual(try form.single("e"), "x=y")
        XCTAssertNil(try form.single("missing"))
    }

    func testRejectsBrokenEncodings() {
        for bad in ["a=%", "a=%4", "a=%zz", "a=%C3", "a=%FF%FE", "a=%C0%AF"] {
            XCTAssertThrowsError(try FormParser.parse(Array(bad.utf8)), bad) { error in
                XCTAssertEqual((error as? FormError)?.code, .badEncoding, bad)
            }
        }
        XCTAssertThrowsError(try FormParser.parse([0x61, 0x3d, 0xff])) { XCTAssertEqual(($0 as? FormError)?.code, .badEncoding) }
    }

    func testRepeatedParameterIsRefused() throws {
        let form = try FormParser.parse(Array("a=1&a=2".utf8))
        XCTAssertThrowsError(try form.single("a")) { XCTAssertEqual(($0 as? FormError)?.code, .repeatedParameter) }
        XCTAssertEqual(form.values("a"), ["1", "2"])
    }

    func testLimits() {
        let limits = FormLimits(maximumBytes: 100, maximumParameters: 3, maximumValueBytes: 10)
        XCTAssertThrowsError(try FormParser.parse(Array(repeating: UInt8(ascii: "a"), count: 101), limits: limits)) {
            XCTAssertEqual(($0 as? FormError)?.code, .tooLarge)
        }
        XCTAssertThrowsError(try FormParser.parse(Array("a=1&b=2&c=3&d=4".utf8), limits: limits)) {
            XCTAssertEqual(($0 as? FormError)?.code, .tooManyParameters)
        }
        XCTAssertThrowsError(try FormParser.parse(Array("a=12345678901".utf8), limits: limits)) {
            XCTAssertEqual(($0 as? FormError)?.code, .tooLarge)
        }
    }

    func testEncodeComponentEscapesEverythingButUnreserved() {
        XCTAssertEqual(FormParser.encodeComponent("a b&c=d\r\n<é>~._-"), "a%20b%26c%3Dd%0D%0A%3C%C3%A9%3E~._-")
        XCTAssertEqual(try FormParser.parse(Array(FormParser.encode([("k", "v &\r\n=")]).utf8)).singleAllowingControlCharacters("k"), "v &\r\n=")
    }

    /// The outside review's NUL byte, and every other C0, DEL and C1 control:
    /// refused by `single`, with the parameter named, before any caller sees
    /// the value; a password (`singleAllowingControlCharacters`) keeps them.
    func testSingleRefusesControlCharactersAndNamesTheParameter() throws {
        for control in ["%00", "%09", "%0A", "%0D", "%1F", "%7F", "%C2%80", "%C2%85", "%C2%9F"] {
            let form = try FormParser.parse(Array("email=alice%40example.com\(control)anything&password=p\(control)w".utf8))
            XCTAssertThrowsError(try form.single("email"), control) {
                XCTAssertEqual(($0 as? FormError)?.code, .controlCharacter, control)
                XCTAssertEqual(($0 as? FormError)?.parameter, "email", control)
            }
            XCTAssertNotNil(try form.singleAllowingControlCharacters("password"), control)
        }
        for allowed in ["%20", "%C2%A0", "%C3%A9", "%E2%80%8B"] {
            XCTAssertNotNil(try FormParser.parse(Array("v=a\(allowed)b".utf8)).single("v"), "\(allowed) is not a control character")
        }
        XCTAssertEqual(FormParameters.firstControlCharacter(in: "é\u{0}"), 2, "byte offset")
    }

    func testFormBodyNeedsFormContentType() throws {
        var request = Request(method: "POST", path: "/token", headers: ["content-type": "application/json"], body: Array("a=1".utf8))
        XCTAssertThrowsError(try request.formParameters()) { XCTAssertEqual(($0 as? FormError)?.code, .unsupportedMediaType) }
        request.headers["content-type"] = "application/x-www-form-urlencoded; charset=UTF-8"
        XCTAssertEqual(try request.formParameters().single("a"), "1")
    }
}

final class CookieAndResponseTests: XCTestCase {
    func testCookieParsing() {
        let cookies = CookieParser.parse("a=1; b=\"two\";c=3; a=ignored; junk; =x")
        XCTAssertEqual(cookies, ["a": "1", "b": "two", "c": "3"])
        XCTAssertEqual(CookieParser.parse(String(repeating: "x", count: 20_000)), [:])
    }

    func testSetCookieAttributes() {
        let header = SetCookie(name: "sso_session", value: "abc", maxAge: 60).headerValue
        XCTAssertEqual(header, "sso_session=abc; Path=/; Secure; HttpOnly; SameSite=Lax; Max-Age=60")
        XCTAssertFalse(header.contains("Domain"), "host-only")
    }

    func testSerializationDropsHeadersThatWouldSplitTheResponse() {
        var response = Response(status: 303, body: Array("x".utf8))
        response.setHeader("Location", "https://a.example/\r\nSet-Cookie: evil=1")
        response.setHeader("X-Fine", "ok")
        let text = String(decoding: response.serialized(), as: UTF8.self)
        XCTAssertTrue(text.hasPrefix("Status: 303 See Other\r\n"))
        XCTAssertFalse(text.contains("evil"))
        XCTAssertTrue(text.contains("X-Fine: ok\r\n"))
        XCTAssertTrue(text.contains("Content-Length: 1\r\n\r\nx"))
    }

    /// Names match whatever their case (RFC 9110 §5.1), letters only: "-"
    /// and "_" or "[" and "{" are different bytes, not cases of each other.
    func testHeaderNamesMatchWithoutCaseAndNothingElse() {
        var response = Response(status: 200, headers: [("Content-Type", "text/plain"), ("X-A-B", "dash")])
        XCTAssertEqual(response.header("content-type"), "text/plain")
        XCTAssertEqual(response.header("CONTENT-TYPE"), "text/plain")
        XCTAssertNil(response.header("x_a_b"))
        XCTAssertNil(response.header("content-typ"))
        XCTAssertFalse(Response.sameName("[", "{"))
        XCTAssertFalse(Response.sameName("@", "`"))
        response.setHeader("x-a-b", "replaced")
        XCTAssertEqual(response.headers.filter { Response.sameName($0.name, "X-A-B") }.map(\.value), ["replaced"])
        let request = Request(method: "GET", path: "/", headers: ["authorization": "Bearer x"])
        XCTAssertEqual(request.header("Authorization"), "Bearer x")
        XCTAssertEqual(request.header("authorization"), "Bearer x")
        XCTAssertNil(request.header("authorizatio"))
    }

    func testUnknownErrorsBecomeOpaque500s() {
        struct Boom: Error {}
        struct Thrower: Responder { func respond(to request: Request) throws -> Response { throw Boom() } }
        let (response, detail) = ResponderOutcome.run(Thrower(), Request(method: "GET", path: "/"))
        XCTAssertEqual(response.status, 500)
        XCTAssertFalse(String(decoding: response.body, as: UTF8.self).contains("Boom"))
        XCTAssertTrue(detail?.contains("Boom") ?? false)
    }

    func testFormErrorsBecome4xx() {
        struct Parser: Responder {
            func respond(to request: Request) throws -> Response { _ = try request.formParameters(); return Response(status: 200) }
        }
        let wrongType = Request(method: "POST", path: "/", headers: ["content-type": "text/plain"], body: Array("a".utf8))
        XCTAssertEqual(ResponderOutcome.run(Parser(), wrongType).0.status, 415)
        let badEncoding = Request(method: "POST", path: "/", headers: ["content-type": "application/x-www-form-urlencoded"], body: Array("a=%zz".utf8))
        XCTAssertEqual(ResponderOutcome.run(Parser(), badEncoding).0.status, 400)
    }

    func testBusyDatabaseBecomes503WithRetryAfter() {
        let busy = SQLiteError(code: 5, message: "database is locked")
        XCTAssertEqual(busy.response.status, 503)
        XCTAssertEqual(busy.response.header("Retry-After"), "1")
        XCTAssertEqual(SQLiteError(code: 11, message: "corrupt").response.status, 500)
    }

    func testLogTimestampFormat() {
        var time = timespec()
        time.tv_sec = 1_700_000_000
        time.tv_nsec = 5_000_000
        XCTAssertEqual(RequestLog.timestamp(now: time), "2023-11-14T22:13:20.005Z")
    }
}

final class CookieByteSplitTests: XCTestCase {
    /// RFC 6265 §5.4 splits the header on the byte ";": a combining mark
    /// right after it must start the next cookie's name, not extend a value.
    func testCombiningMarkAfterSemicolonDoesNotGlueCookies() {
        let cookies = CookieParser.parse("a=1;\u{301}b=2; c=\"3\"")
        XCTAssertEqual(cookies["a"], "1")
        XCTAssertEqual(cookies["\u{301}b"], "2")
        XCTAssertEqual(cookies["c"], "3")
    }

    /// Found by the cookie-parser fuzzer (10-minute run): U+037E GREEK
    /// QUESTION MARK is canonically equivalent to ";" for Swift's String
    /// comparison, but it is two bytes (CD BE), not the separator; the value
    /// keeps it and no cookie is split there.
    func testGreekQuestionMarkIsNotASeparator() {
        let cookies = CookieParser.parse("c4=v\u{37E} c5=v5; c6=v6")
        XCTAssertEqual(cookies.count, 2)
        XCTAssertEqual(Array(cookies["c4"]?.utf8 ?? "".utf8), Array("v\u{37E} c5=v5".utf8))
        XCTAssertEqual(cookies["c6"], "v6")
    }
}
