import Glibc

/// The deployment's accent colour (`GATEHOUSE_BRAND_COLOR`, and for dark
/// mode `GATEHOUSE_BRAND_COLOR_DARK`) as the CSS custom properties the
/// stylesheet draws buttons, links and focus rings with.
///
/// WCAG 2.2 §1.4.11 asks 3:1 for user-interface components against what is
/// next to them, so a colour the card would swallow is refused here, with
/// the ratio, instead of shipping a button nobody can see. The text on a
/// button is black or white, whichever reads better (§1.4.3, 4.5:1).
public struct BrandColours: Sendable, Equatable {
    public struct RGB: Sendable, Equatable {
        public let red: Int, green: Int, blue: Int

        /// `#rrggbb`, nothing else.
        public init?(hex: String) {
            let bytes = Array(hex.utf8)
            guard bytes.count == 7, bytes[0] == 0x23, let value = Int(String(hex.dropFirst()), radix: 16),
                  bytes.dropFirst().allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x66) }) else { return nil }
            self.init(red: value >> 16, green: (value >> 8) & 0xFF, blue: value & 0xFF)
        }

        init(red: Int, green: Int, blue: Int) {
            self.red = red
            self.green = green
            self.blue = blue
        }

        public var hex: String {
            func two(_ component: Int) -> String {
                let digits = String(component, radix: 16)
                return digits.count == 1 ? "0" + digits : digits
            }
            return "#" + two(red) + two(green) + two(blue)
        }

        /// WCAG 2.2 "relative luminance".
        var luminance: Double {
            func linear(_ component: Int) -> Double {
                let value = Double(component) / 255
                return value <= 0.04045 ? value / 12.92 : Self.power((value + 0.055) / 1.055, 2.4)
            }
            return 0.2126 * linear(red) + 0.7152 * linear(green) + 0.0722 * linear(blue)
        }

        /// x^y for x in (0, 1] without Foundation's `pow`.
        static func power(_ base: Double, _ exponent: Double) -> Double {
            guard base > 0 else { return 0 }
            return exp(exponent * log(base))
        }

        /// `amount` (0...1) of the way towards `other`.
        func mixed(with other: RGB, _ amount: Double) -> RGB {
            func mix(_ a: Int, _ b: Int) -> Int { Int((Double(a) + (Double(b) - Double(a)) * amount).rounded()) }
            return RGB(red: mix(red, other.red), green: mix(green, other.green), blue: mix(blue, other.blue))
        }
    }

    /// WCAG 2.2 "contrast ratio".
    public static func contrast(_ first: RGB, _ second: RGB) -> Double {
        let (lighter, darker) = first.luminance > second.luminance ? (first.luminance, second.luminance) : (second.luminance, first.luminance)
        return (lighter + 0.05) / (darker + 0.05)
    }

    /// The card's colour in each scheme (`--surface` in gatehouse.css).
    static let lightSurface = RGB(red: 0xFF, green: 0xFF, blue: 0xFF)
    static let darkSurface = RGB(red: 0x19, green: 0x1E, blue: 0x28)
    static let white = RGB(red: 0xFF, green: 0xFF, blue: 0xFF)
    static let black = RGB(red: 0x0B, green: 0x15, blue: 0x30)

    public let light: RGB
    public let dark: RGB

    /// nil when neither colour is set: the stylesheet's own colours stay.
    public init?(light lightHex: String?, dark darkHex: String?) throws {
        guard let lightHex, !lightHex.isEmpty else {
            if let darkHex, !darkHex.isEmpty { throw ConfigError("GATEHOUSE_BRAND_COLOR_DARK needs GATEHOUSE_BRAND_COLOR") }
            return nil
        }
        guard let light = RGB(hex: lightHex) else { throw ConfigError("GATEHOUSE_BRAND_COLOR must be #rrggbb, got \(lightHex.prefix(16))") }
        try Self.requireContrast(light, on: Self.lightSurface, "GATEHOUSE_BRAND_COLOR", "white")
        let dark: RGB
        if let darkHex, !darkHex.isEmpty {
            guard let given = RGB(hex: darkHex) else { throw ConfigError("GATEHOUSE_BRAND_COLOR_DARK must be #rrggbb, got \(darkHex.prefix(16))") }
            try Self.requireContrast(given, on: Self.darkSurface, "GATEHOUSE_BRAND_COLOR_DARK", "dark grey")
            dark = given
        } else {
            // Unset: the light colour lightened until it reads on the dark
            // card as well as the stylesheet's own dark accent does (4.5:1).
            var amount = 0.0
            var candidate = light
            while Self.contrast(candidate, Self.darkSurface) < 4.5 && amount < 1 {
                amount += 0.05
                candidate = light.mixed(with: Self.white, amount)
            }
            dark = candidate
        }
        self.light = light
        self.dark = dark
    }

    static func requireContrast(_ colour: RGB, on surface: RGB, _ setting: String, _ surfaceName: String) throws {
        let ratio = contrast(colour, surface)
        guard ratio >= 3 else {
            let shown = Double(Int(ratio * 10)) / 10
            throw ConfigError("\(setting) \(colour.hex) has a contrast of \(shown):1 on the \(surfaceName) card; buttons and links need at least 3:1")
        }
    }

    /// The rules appended to gatehouse.css, after its own `:root` blocks.
    public var css: String {
        func block(_ accent: RGB, hoverTowards: RGB) -> String {
            let onAccent = Self.contrast(Self.white, accent) >= Self.contrast(Self.black, accent) ? Self.white : Self.black
            return "--accent: \(accent.hex); --accent-hover: \(accent.mixed(with: hoverTowards, 0.2).hex); "
                + "--on-accent: \(onAccent.hex); --focus: \(accent.hex);"
        }
        return """

            /* The deployment's brand colours (GATEHOUSE_BRAND_COLOR, GATEHOUSE_BRAND_COLOR_DARK), added by ssoctl pages. */
            :root { \(block(light, hoverTowards: RGB(red: 0, green: 0, blue: 0))) }
            @media (prefers-color-scheme: dark) {
              :root { \(block(dark, hoverTowards: Self.white)) }
            }

            """
    }
}
