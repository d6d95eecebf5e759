import XCTest
@testable import AuthServer

/// QRCodeSVG: libqrencode's symbol drawn as SVG. There is no decoder here,
/// so the tests check structure: the size, the three finder patterns in
/// libqrencode's own module data, and that the SVG's path draws exactly
/// the dark modules.
final class QRCodeSVGTests: XCTestCase {
    let uri = "otpauth://totp/Gatehouse:alice@example.com?secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP&issuer=Gatehouse"
        + "&algorithm=SHA1&digits=6&period=30"

    /// The dark modules the SVG's path draws, in symbol coordinates.
    func drawnModules(_ svg: String, quietZone: Int = QRCodeSVG.quietZone) throws -> Set<[Int]> {
        let start = try XCTUnwrap(svg.range(of: " d=\""))
        let rest = svg[start.upperBound...]
        let d = String(rest[..<(try XCTUnwrap(rest.firstIndex(of: "\"")))])
        var modules = Set<[Int]>()
        // Each subpath: M x y hN v1 h-N z (one row's run of N modules).
        for part in d.split(separator: "M") {
            let numbers = part.split(whereSeparator: { "hvz ".contains($0) }).compactMap { Int($0) }
            XCTAssertEqual(numbers.count, 5, "subpath M\(part)")
            guard numbers.count == 5 else { continue }
            let (x, y, run) = (numbers[0], numbers[1], numbers[2])
            XCTAssertEqual(numbers[3], 1)
            XCTAssertEqual(numbers[4], -run)
            for dx in 0..<run { XCTAssertTrue(modules.insert([x + dx - quietZone, y - quietZone]).inserted, "module drawn twice") }
        }
        return modules
    }

    func testViewBoxHasAFourModuleQuietZone() throws {
        let code = try QRCodeSVG(encoding: uri)
        XCTAssertEqual((code.width - 17) % 4, 0, "a QR width is 17 + 4 × version")
        XCTAssertGreaterThanOrEqual(code.width, 21)
        let svg = code.svg(label: "QR code")
        let side = code.width + 8
        XCTAssertTrue(svg.contains("viewBox=\"0 0 \(side) \(side)\""), svg)
        XCTAssertTrue(svg.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\""))
        XCTAssertTrue(svg.hasSuffix("</svg>"))
    }

    func testFinderPatternsAreDarkSevenBySevenRingsAtThreeCorners() throws {
        let code = try QRCodeSVG(encoding: uri)
        let n = code.width
        for (originX, originY) in [(0, 0), (n - 7, 0), (0, n - 7)] {
            for y in 0..<7 {
                for x in 0..<7 {
                    let ring = max(abs(x - 3), abs(y - 3))
                    // Ring 3 (border) dark, ring 2 light, rings 0-1 (the 3×3 centre) dark.
                    XCTAssertEqual(code.isDark(x: originX + x, y: originY + y), ring != 2, "finder at (\(originX), \(originY)) module (\(x), \(y))")
                }
            }
            // The separator around each finder is light.
            for i in -1...7 {
                for (x, y) in [(originX + i, originY - 1), (originX + i, originY + 7), (originX - 1, originY + i), (originX + 7, originY + i)]
                    where x >= 0 && y >= 0 && x < n && y < n {
                    XCTAssertFalse(code.isDark(x: x, y: y), "separator module (\(x), \(y))")
                }
            }
        }
        // The fourth corner has no finder pattern.
        XCTAssertFalse((0..<7).allSatisfy { code.isDark(x: n - 1 - $0, y: n - 1) && code.isDark(x: n - 1, y: n - 1 - $0) })
    }

    func testThePathDrawsExactlyTheDarkModules() throws {
        let code = try QRCodeSVG(encoding: uri)
        var dark = Set<[Int]>()
        for y in 0..<code.width { for x in 0..<code.width where code.isDark(x: x, y: y) { dark.insert([x, y]) } }
        XCTAssertEqual(try drawnModules(code.svg(label: "x")), dark)
        XCTAssertGreaterThan(dark.count, code.width * code.width / 4)
    }

    func testTheSVGIsAccessibleCrispAndFreeOfStyle() throws {
        let svg = try QRCodeSVG(encoding: uri).svg(label: "Scan <me> & \"go\"")
        XCTAssertTrue(svg.contains("role=\"img\""))
        XCTAssertTrue(svg.contains("aria-label=\"Scan &lt;me&gt; &amp; &quot;go&quot;\""), svg.prefix(300).description)
        XCTAssertTrue(svg.contains("shape-rendering=\"crispEdges\""))
        XCTAssertFalse(svg.lowercased().contains("style"), "CSP style-src 'self': no style attribute or element")
        XCTAssertEqual(svg.components(separatedBy: "<path").count, 2, "one path")
        XCTAssertTrue(svg.contains("<path fill=\"#000\""))
        XCTAssertTrue(svg.contains("<rect width=") && svg.contains("fill=\"#fff\""), "a light background, also in dark mode")
        XCTAssertFalse(svg.contains("<script"))
    }

    func testCaseIsKeptAndDifferentTextsDiffer() throws {
        let upper = try QRCodeSVG(encoding: "ABCDEFGH").svg(label: "x")
        let lower = try QRCodeSVG(encoding: "abcdefgh").svg(label: "x")
        XCTAssertNotEqual(upper, lower)
        XCTAssertEqual(upper, try QRCodeSVG(encoding: "ABCDEFGH").svg(label: "x"), "deterministic")
    }

    func testATooLongInputFailsCleanly() {
        // Version 40-M holds 2331 bytes in 8-bit mode.
        XCTAssertNoThrow(try QRCodeSVG(encoding: String(repeating: "a", count: 2331)))
        XCTAssertThrowsError(try QRCodeSVG(encoding: String(repeating: "a", count: 2332))) { error in
            XCTAssertTrue("\(error)".contains("too long"), "\(error)")
        }
        XCTAssertThrowsError(try QRCodeSVG(encoding: String(repeating: "a", count: 100_000)))
        XCTAssertThrowsError(try QRCodeSVG(encoding: ""))
        XCTAssertNil(QRCodeSVG.svg(encoding: String(repeating: "é", count: 5000), label: "x"))
    }
}
