/// How the pages look and read for one deployment, from its settings
/// (README "Branding and languages"): no code change and no edit of
/// `www/` is needed to put a company's name, logo and colour on them.
public struct BrandSettings: Sendable, Equatable {
    /// `GATEHOUSE_BRAND_NAME`: the product name in every page's header and
    /// title, and in texts that say `{brand}`.
    public var name: String
    /// `GATEHOUSE_BRAND_LOGO`: an SVG or PNG file, copied beside the pages;
    /// nil keeps Gatehouse's own.
    public var logoPath: String?
    /// `GATEHOUSE_BRAND_COLOR` / `_DARK`; nil keeps the stylesheet's.
    public var colours: BrandColours?
    /// `GATEHOUSE_DEFAULT_LANGUAGE`: for a browser that asks for none of the
    /// languages there are pages in.
    public var defaultLanguage: String
    /// `GATEHOUSE_LOCALES_DIR`: the deployment's own catalogues, read over
    /// `www/locales/` key by key (a changed text, or a whole new language).
    public var localesDirectory: String?

    public static let standardName = "Gatehouse"

    public init(values: [String: String]) throws {
        let name = values["GATEHOUSE_BRAND_NAME"].flatMap { $0.isEmpty ? nil : $0 } ?? Self.standardName
        // A name is text on a page and in a title: no control characters, no
        // braces (they would read as a placeholder), and short enough for a
        // phone's header.
        guard name.count <= 40, name.trimmingASCIIWhitespace() == name,
              !name.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) || $0 == "{" || $0 == "}" }) else {
            throw ConfigError("GATEHOUSE_BRAND_NAME must be at most 40 characters, without control characters, braces or outer spaces")
        }
        self.name = name
        logoPath = values["GATEHOUSE_BRAND_LOGO"].flatMap { $0.isEmpty ? nil : $0 }
        if let logoPath, !(logoPath.hasSuffix(".svg") || logoPath.hasSuffix(".png")) {
            throw ConfigError("GATEHOUSE_BRAND_LOGO must name an .svg or .png file")
        }
        colours = try BrandColours(light: values["GATEHOUSE_BRAND_COLOR"], dark: values["GATEHOUSE_BRAND_COLOR_DARK"])
        let language = values["GATEHOUSE_DEFAULT_LANGUAGE"].flatMap { $0.isEmpty ? nil : $0 } ?? "en"
        guard let tag = LanguagePreferences.normalisedTag(language) else {
            throw ConfigError("GATEHOUSE_DEFAULT_LANGUAGE must be a language tag such as en or de")
        }
        defaultLanguage = tag
        localesDirectory = values["GATEHOUSE_LOCALES_DIR"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Where the pages find the logo.
    public var logoURL: String {
        guard let logoPath else { return "/img/gatehouse.svg" }
        return logoPath.hasSuffix(".png") ? "/img/brand-logo.png" : "/img/brand-logo.svg"
    }
}
