@testable import SSOCore
import XCTest

/// The CBOR decoder (RFC 8949) WebAuthn's structures go through: the
/// Appendix A examples in its scope decode (and encode back), the ones out
/// of it are refused by name, and hostile input is refused without a crash
/// or a large allocation.
final class CBORTests: XCTestCase {
    func decoded(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> CBORValue? {
        do {
            return try CBOR.decode(hex(text))
        } catch {
            XCTFail("\(text): \(error)", file: file, line: line)
            return nil
        }
    }

    func assertRefused(_ text: String, _ reason: CBORError.Reason, maximumDepth: Int = CBOR.defaultMaximumDepth,
                       maximumItems: Int = CBOR.defaultMaximumItems, file: StaticString = #filePath, line: UInt = #line) {
        assertRefused(hex(text), reason, maximumDepth: maximumDepth, maximumItems: maximumItems, file: file, line: line)
    }

    func assertRefused(_ bytes: [UInt8], _ reason: CBORError.Reason, maximumDepth: Int = CBOR.defaultMaximumDepth,
                       maximumItems: Int = CBOR.defaultMaximumItems, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try CBOR.decode(bytes, maximumDepth: maximumDepth, maximumItems: maximumItems),
                             "\(bytes.prefix(16))", file: file, line: line) { error in
            XCTAssertEqual((error as? CBORError)?.reason, reason, "\(error)", file: file, line: line)
        }
    }

    /// RFC 8949 Appendix A, the examples in scope: each decodes to its
    /// value and, being in preferred (here: CTAP2 canonical) form, encodes
    /// back to the same bytes.
    func testAppendixAExamplesInScope() {
        let examples: [(String, CBORValue)] = [
            ("00", .int(0)), ("01", .int(1)), ("0a", .int(10)), ("17", .int(23)), ("1818", .int(24)), ("1819", .int(25)),
            ("1864", .int(100)), ("1903e8", .int(1000)), ("1a000f4240", .int(1_000_000)), ("1b000000e8d4a51000", .int(1_000_000_000_000)),
            ("20", .int(-1)), ("29", .int(-10)), ("3863", .int(-100)), ("3903e7", .int(-1000)),
            ("f4", .bool(false)), ("f5", .bool(true)), ("f6", .null),
            ("40", .bytes([])), ("4401020304", .bytes([1, 2, 3, 4])),
            ("60", .text("")), ("6161", .text("a")), ("6449455446", .text("IETF")), ("62225c", .text("\"\\")),
            ("62c3bc", .text("\u{00FC}")), ("63e6b0b4", .text("\u{6C34}")), ("64f0908591", .text("\u{10151}")),
            ("80", .array([])), ("83010203", .array([.int(1), .int(2), .int(3)])),
            ("8301820203820405", .array([.int(1), .array([.int(2), .int(3)]), .array([.int(4), .int(5)])])),
            ("98190102030405060708090a0b0c0d0e0f101112131415161718181819", .array((1...25).map { .int($0) })),
            ("a0", .map([:])), ("a201020304", .map([1: .int(2), 3: .int(4)])),
            ("a26161016162820203", .map(["a": .int(1), "b": .array([.int(2), .int(3)])])),
            ("826161a161626163", .array([.text("a"), .map(["b": .text("c")])])),
            ("a56161614161626142616361436164614461656145",
             .map(["a": .text("A"), "b": .text("B"), "c": .text("C"), "d": .text("D"), "e": .text("E")])),
        ]
        for (text, value) in examples {
            XCTAssertEqual(decoded(text), value, text)
            XCTAssertEqual(value.encoded, hex(text), text)
        }
    }

    /// Appendix A's examples outside WebAuthn's CBOR are refused, each for
    /// its own reason: integers beyond Int, bignums (tags), floats,
    /// undefined and other simple values, tags, indefinite lengths.
    func testAppendixAExamplesOutOfScopeAreRefused() {
        assertRefused("1bffffffffffffffff", .integerOutOfRange)  // 18446744073709551615
        assertRefused("3bffffffffffffffff", .integerOutOfRange)  // -18446744073709551616
        assertRefused("c249010000000000000000", .tag)  // bignum 18446744073709551616
        assertRefused("c349010000000000000000", .tag)
        for float in ["f90000", "f98000", "f93c00", "fb3ff199999999999a", "f93e00", "f97bff", "fa47c35000", "fa7f7fffff",
                      "fb7e37e43c8800759c", "f90001", "f90400", "f9c400", "fbc010666666666666", "f97c00", "f97e00", "f9fc00",
                      "fa7f800000", "fa7fc00000", "faff800000", "fb7ff0000000000000", "fb7ff8000000000000", "fbfff0000000000000"] {
            assertRefused(float, .floatingPoint)
        }
        assertRefused("f7", .unsupportedSimpleValue)  // undefined
        assertRefused("f0", .unsupportedSimpleValue)  // simple(16)
        assertRefused("f8ff", .unsupportedSimpleValue)  // simple(255)
        for tagged in ["c074323031332d30332d32315432303a30343a30305a", "c11a514b67b0", "c1fb41d452d9ec200000", "d74401020304",
                       "d818456449455446", "d82076687474703a2f2f7777772e6578616d706c652e636f6d"] {
            assertRefused(tagged, .tag)
        }
        for indefinite in ["5f42010243030405ff", "7f657374726561646d696e67ff", "9fff", "9f018202039f0405ffff", "9f01820203820405ff",
                           "83018202039f0405ff", "83019f0203ff820405", "9f0102030405060708090a0b0c0d0e0f101112131415161718181819ff",
                           "bf61610161629f0203ffff", "826161bf61626163ff", "bf6346756ef563416d7421ff"] {
            assertRefused(indefinite, .indefiniteLength)
        }
    }

    /// Every proper prefix of a valid item is refused as truncated: the
    /// specification's credential public key and a nested structure.
    func testTruncationAtEveryByteIsRefused() throws {
        let items = [
            hex("a5010203262001215820afefa16f97ca9b2d23eb86ccb64098d20db90856062eb249c33a9b672f26df61225820930a56b87a2fca66334b03458abf879717c12cc68ed73290af2e2664796b9220"),
            CBORValue.map(["fmt": .text("none"), "attStmt": .map([:]), "list": .array([.int(-1000), .bytes(Array(repeating: 7, count: 300)),
                                                                                    .bool(true), .null, .int(Int.max), .int(Int.min)])]).encoded,
        ]
        for item in items {
            XCTAssertNoThrow(try CBOR.decode(item))
            for length in 0..<item.count {
                assertRefused(Array(item.prefix(length)), .truncated)
            }
        }
    }

    /// Nesting: `maximumDepth` containers deep is fine, one more is not.
    func testNestingOverTheLimitIsRefused() throws {
        let depth = CBOR.defaultMaximumDepth
        XCTAssertNoThrow(try CBOR.decode([UInt8](repeating: 0x81, count: depth - 1) + [0x80]))
        assertRefused([UInt8](repeating: 0x81, count: depth) + [0x80], .tooDeep)
        assertRefused([UInt8](repeating: 0x81, count: depth) + [0x00], .tooDeep)
        XCTAssertNoThrow(try CBOR.decode(nested(maps: depth - 1)))
        assertRefused(nested(maps: depth), .tooDeep)
        // Deep hostile nesting is refused at the limit, without recursing further.
        assertRefused([UInt8](repeating: 0x81, count: 100_000), .tooDeep)
        assertRefused("8180", .tooDeep, maximumDepth: 1)
    }

    /// {1: {1: ... {1: 0}}}: `count` maps around an integer.
    func nested(maps count: Int) -> [UInt8] {
        Array([[UInt8]](repeating: [0xA1, 0x01], count: count).joined()) + [0x00]
    }

    /// A declared length far beyond the input (2^63, 2^64 - 1) is found
    /// to be truncated before anything of that size is allocated or looped over.
    func testHugeLengthsAreRefusedBeforeAllocating() {
        for head in ["5b", "7b", "9b", "bb"] {
            assertRefused(head + "8000000000000000", .truncated)
            assertRefused(head + "ffffffffffffffff", .truncated)
            assertRefused(head + "00000000ffffffff" + "00", .truncated)
        }
        assertRefused("5a7fffffff01", .truncated)
        assertRefused("9a0000000201", .truncated)  // two elements, one byte left
        assertRefused("a2010203", .truncated)  // two entries, three bytes
    }

    func testItemCountLimit() throws {
        let limit = CBOR.defaultMaximumItems
        // The array and its elements are all items.
        XCTAssertNoThrow(try CBOR.decode(CBORValue.array(Array(repeating: .int(0), count: limit - 1)).encoded))
        assertRefused(CBORValue.array(Array(repeating: .int(0), count: limit)).encoded, .tooManyItems)
        assertRefused("83010203", .tooManyItems, maximumItems: 3)
        // Map keys count too.
        assertRefused("a201020304", .tooManyItems, maximumItems: 4)
    }

    func testDuplicateMapKeysAreRefused() {
        assertRefused("a201020103", .duplicateMapKey)
        assertRefused("a2616101616102", .duplicateMapKey)
        assertRefused("a2200120" + "02", .duplicateMapKey)
        // Keys are equal by their bytes: KELVIN SIGN is not "K", so no duplicate
        // (and a lookup of "K" does not find it), and 1 is not "1".
        let kelvin = CBORValue.map([.text("\u{212A}"): .int(1), "K": .int(2), 1: .int(3), "1": .int(4)])
        XCTAssertEqual(try CBOR.decode(kelvin.encoded), kelvin)
        XCTAssertEqual(kelvin["K"], .int(2))
        XCTAssertEqual(kelvin[.text("\u{212A}")], .int(1))
        XCTAssertNotEqual(CBORValue.text("\u{212A}"), CBORValue.text("K"))
    }

    func testMapKeysAreIntegersOrText() {
        assertRefused("a14001", .unsupportedMapKey)  // a byte string key
        assertRefused("a18001", .unsupportedMapKey)  // an array key
        assertRefused("a1f501", .unsupportedMapKey)  // true
        assertRefused("a1f601", .unsupportedMapKey)  // null
    }

    func testTextMustBeValidUTF8() {
        assertRefused("62c328", .invalidUTF8)  // a lead byte without its continuation
        assertRefused("61ff", .invalidUTF8)
        assertRefused("6180", .invalidUTF8)  // a lone continuation byte
        assertRefused("62c0af", .invalidUTF8)  // overlong "/"
        assertRefused("63eda080", .invalidUTF8)  // a UTF-16 surrogate, U+D800
        assertRefused("64f4908080", .invalidUTF8)  // beyond U+10FFFF
        assertRefused("a162c32801", .invalidUTF8)  // as a map key
        XCTAssertEqual(decoded("63e282ac"), .text("€"))
    }

    func testIntegersOutsideIntAreRefused() {
        XCTAssertEqual(decoded("1b7fffffffffffffff"), .int(Int.max))
        XCTAssertEqual(decoded("3b7fffffffffffffff"), .int(Int.min))
        assertRefused("1b8000000000000000", .integerOutOfRange)
        assertRefused("3b8000000000000000", .integerOutOfRange)
        XCTAssertEqual(CBORValue.int(Int.min).encoded, hex("3b7fffffffffffffff"))
        XCTAssertEqual(CBORValue.int(Int.max).encoded, hex("1b7fffffffffffffff"))
    }

    func testReservedAndMalformedHeadsAreRefused() {
        for head in ["1c", "1d", "1e", "1f", "3c", "3f", "5c", "7d", "9e", "bc", "dc", "df", "fc", "fd", "fe"] {
            assertRefused(head, head == "dc" || head == "df" ? .tag : .reservedAdditionalInformation)
        }
        assertRefused("ff", .indefiniteLength)  // a break with nothing to end
        assertRefused("", .truncated)
        assertRefused("18", .truncated)
        assertRefused("1900", .truncated)
        assertRefused("1b00000000000000", .truncated)
    }

    /// Heads longer than they need be are well-formed (RFC 8949 §3) and
    /// accepted; encoding writes the shortest.
    func testLongerHeadsAreAcceptedAndEncodeShortest() {
        XCTAssertEqual(decoded("1800"), .int(0))
        XCTAssertEqual(decoded("1b0000000000000001"), .int(1))
        XCTAssertEqual(decoded("5900020102"), .bytes([1, 2]))
        XCTAssertEqual(decoded("b8010102"), .map([1: .int(2)]))
        XCTAssertEqual(decoded("b8010102")?.encoded, hex("a10102"))
    }

    func testTrailingBytesAndTheRest() throws {
        assertRefused("0102", .trailingBytes)
        let input = hex("8201020304")
        let (value, rest) = try CBOR.decodeItem(input[...])
        XCTAssertEqual(value, .array([.int(1), .int(2)]))
        XCTAssertEqual(Array(rest), [0x03, 0x04])
        XCTAssertEqual(rest.startIndex, 3)
        // On a slice that does not start at 0.
        let (inner, innerRest) = try CBOR.decodeItem(input[3...])
        XCTAssertEqual(inner, .int(3))
        XCTAssertEqual(Array(innerRest), [0x04])
        XCTAssertThrowsError(try CBOR.decode(input[1...])) { error in
            XCTAssertEqual(error as? CBORError, CBORError(.trailingBytes, at: 1))
        }
    }

    /// CTAP2 canonical map order: shorter encoded keys first, then bytewise
    /// (so 10 < -1 < 100 < "a" < "aa"), as the specification's COSE keys are.
    func testEncodingSortsMapKeysCanonically() {
        let map = CBORValue.map(["aa": .int(0), "a": .int(0), 100: .int(0), -1: .int(0), 10: .int(0)])
        XCTAssertEqual(map.encoded, hex("a5" + "0a00" + "2000" + "186400" + "616100" + "62616100"))
    }

    func testErrorsNameReasonAndOffset() {
        XCTAssertEqual(CBORError(.tag, at: 3).description, "CBOR tag at byte 3")
        XCTAssertThrowsError(try CBOR.decode(hex("8201c0"))) { error in
            XCTAssertEqual(error as? CBORError, CBORError(.tag, at: 2))
        }
    }
}

fileprivate func hex(_ text: String) -> [UInt8] {
    let digits = Array(text.utf8)
    precondition(digits.count % 2 == 0, "odd hex")
    return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(decoding: digits[$0...$0 + 1], as: UTF8.self), radix: 16)! }
}
