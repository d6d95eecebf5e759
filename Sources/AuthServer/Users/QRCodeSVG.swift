import CQRencode
import Glibc
import SSOCore

public struct QRCodeError: Error, CustomStringConvertible {
    public let description: String
}

/// A QR code made by libqrencode and drawn as SVG on the server (the TOTP
/// enrolment's otpauth:// URI on /account): no script, no image request.
/// The whole input is one 8-bit segment (bytes as given, so case is kept),
/// error correction level M (15 %), the smallest version that holds it.
///
/// The SVG has no `style` attribute or element (the pages' CSP is
/// `style-src 'self'`): colours are `fill` attributes, light background
/// included, so the code stays dark on light in a dark colour scheme.
/// Owns libqrencode's `QRcode`; no C type leaves this file.
public final class QRCodeSVG {
    /// Light modules around the symbol (ISO/IEC 18004 asks for 4).
    public static let quietZone = 4

    private let code: UnsafeMutablePointer<QRcode>
    /// Modules per side, quiet zone excluded.
    public let width: Int

    /// Throws for an empty input or one too long for any QR version.
    public init(encoding text: String) throws {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty else { throw QRCodeError(description: "nothing to encode in a QR code") }
        errno = 0
        // QRcode_encodeData takes a length, so a NUL byte cannot cut the input short.
        let made = bytes.withUnsafeBufferPointer { QRcode_encodeData(Int32($0.count), $0.baseAddress, 0, QR_ECLEVEL_M) }
        guard let made else {
            throw QRCodeError(description: errno == ERANGE ? "the text is too long for a QR code (\(bytes.count) bytes)"
                                                           : "libqrencode failed (errno \(errno))")
        }
        code = made
        width = Int(made.pointee.width)
    }

    deinit { QRcode_free(code) }

    /// Whether the module at column `x`, row `y` (0 ..< width) is dark
    /// (libqrencode: bit 0 of its byte).
    public func isDark(x: Int, y: Int) -> Bool {
        precondition(x >= 0 && x < width && y >= 0 && y < width, "module outside the symbol")
        return code.pointee.data[y * width + x] & 1 == 1
    }

    /// The SVG: one `<path>` of the dark modules, each row's runs merged
    /// (`M x y hN v1 h-N z`), on a light square with the quiet zone.
    public func svg(label: String) -> String {
        let side = width + 2 * Self.quietZone
        var path = ""
        path.reserveCapacity(width * width * 4)
        for y in 0..<width {
            var x = 0
            while x < width {
                guard isDark(x: x, y: y) else { x += 1; continue }
                var run = 1
                while x + run < width && isDark(x: x + run, y: y) { run += 1 }
                path += "M\(x + Self.quietZone) \(y + Self.quietZone)h\(run)v1h-\(run)z"
                x += run
            }
        }
        return "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 \(side) \(side)\" role=\"img\" "
            + "aria-label=\"\(HTMLEscaping.escape(label))\" shape-rendering=\"crispEdges\" class=\"qr-code\">"
            + "<rect width=\"\(side)\" height=\"\(side)\" fill=\"#fff\"/>"
            + "<path fill=\"#000\" d=\"\(path)\"/></svg>"
    }

    /// `text` as an SVG QR code, or nil if it cannot be one.
    public static func svg(encoding text: String, label: String) -> String? {
        try? QRCodeSVG(encoding: text).svg(label: label)
    }
}
