import Foundation
import Glibc
import XCTest
@testable import SSOCore

/// The request log's hand-written JSON: any string survives a JSON parser
/// byte for byte, and the line reads as JSONEncoder's did.
final class JSONLineWriterTests: XCTestCase {
    func testEveryStringRoundTripsThroughAJSONParser() throws {
        let hostile = ["plain", "quote \" and \\ backslash", "new\nline\rreturn\ttab", "nul \u{0} bell \u{7} esc \u{1B} us \u{1F}",
                       "del \u{7F}", "é ü 漢字 🙂", "line\u{2028}separator", "</script>", ""]
        for value in hostile {
            var line = JSONLineWriter()
            line.string("value", value)
            line.integer("n", -42)
            let bytes = line.finish()
            XCTAssertEqual(bytes.last, UInt8(ascii: "\n"))
            XCTAssertFalse(bytes.dropLast().contains(UInt8(ascii: "\n")), "one line, whatever the value holds")
            XCTAssertFalse(bytes.contains(where: { $0 < 0x20 && $0 != 0x0A }), "no raw control character")
            let decoded = try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any]
            XCTAssertEqual(decoded?["value"] as? String, value)
            XCTAssertEqual(decoded?["n"] as? Int, -42)
        }
    }

    /// RequestLog.request as it writes to standard error, captured through a pipe.
    func testTheRequestLineHasTheFieldsAndNeverTheQueryOrHeaders() throws {
        let request = Request(method: "GET", path: "/api/\"data\"\n", query: "code=secret-code", headers: ["cookie": "sso=secret-cookie"],
                              body: [], remoteAddress: "127.0.0.1", requestID: "abc123")
        var ends: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&ends), 0)
        let saved = dup(2)
        dup2(ends[1], 2)
        RequestLog.request(endpoint: "api-a", request: request, status: 200, milliseconds: 1.23456, detail: "why \"this\"")
        XCTAssertTrue(RequestLog.hasPending, "held until the accept loop finds no connection waiting")
        RequestLog.flush()
        XCTAssertFalse(RequestLog.hasPending)
        dup2(saved, 2)
        close(saved)
        close(ends[1])
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = read(ends[0], &buffer, buffer.count)
        close(ends[0])
        let line = Array(buffer.prefix(max(count, 0)))
        XCTAssertEqual(line.last, UInt8(ascii: "\n"))
        let text = String(decoding: line, as: UTF8.self)
        XCTAssertTrue(text.hasPrefix(#"{"detail":"why \"this\"","duration_ms":1.235,"endpoint":"api-a","method":"GET","path":"/api/\"data\"\n","#
            + #""remote_addr":"127.0.0.1","request_id":"abc123","status":200,"time":""#), text)
        XCTAssertFalse(text.contains("secret"))
        let decoded = try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any]
        XCTAssertEqual(decoded?["path"] as? String, "/api/\"data\"\n")
        XCTAssertEqual((decoded?["time"] as? String)?.count, 24)
    }

    /// A long value is cut at a byte length, never inside a scalar: the
    /// line must stay UTF-8 that a JSON parser reads.
    func testLongValuesAreCutOnAScalarBoundary() throws {
        for (value, limit, expected) in [("abcdef", 4, "abcd"), ("ab漢字", 4, "ab"), ("ab漢字", 5, "ab漢"), ("🙂🙂", 7, "🙂"),
                                         ("a\"b", 2, "a\""), ("short", 64, "short"), ("", 3, "")] {
            var line = JSONLineWriter()
            line.string("value", value, maximumBytes: limit)
            let decoded = try JSONSerialization.jsonObject(with: Data(line.finish())) as? [String: Any]
            XCTAssertEqual(decoded?["value"] as? String, expected, "\(value) cut at \(limit) bytes")
        }
    }

    func testMillisecondsAreWrittenAsJSONNumbers() throws {
        for (value, expected) in [(1.23456, "1.235"), (0.5, "0.5"), (3.0, "3.0"), (0.0004, "0.0"), (0.0006, "0.001"),
                                  (12.04, "12.04"), (-1.0, "0.0"), (1234.5678, "1234.568")] {
            var line = JSONLineWriter()
            line.milliseconds("ms", value)
            XCTAssertEqual(String(decoding: line.finish(), as: UTF8.self), "{\"ms\":\(expected)}\n")
        }
    }

    func testTimestampsKeepTheirWidth() {
        XCTAssertEqual(RequestLog.timestamp(now: timespec(tv_sec: 0, tv_nsec: 0)), "1970-01-01T00:00:00.000Z")
        XCTAssertEqual(RequestLog.timestamp(now: timespec(tv_sec: 253_402_300_799, tv_nsec: 999_999_999)), "9999-12-31T23:59:59.999Z")
    }
}
