import Foundation
import Glibc
import XCTest
@testable import SSOCore

/// The pages' languages and brand: RFC 4647 lookup over `ui_locales` and
/// `Accept-Language`, catalogue texts with values, templates, the brand's
/// colours and what `ssoctl pages` writes.
final class PagesTests: XCTestCase {
    let available: Set<String> = ["en", "de", "pt-br"]

    func choose(ui: String? = nil, accept: String? = nil) -> String? {
        LanguagePreferences.lookup(LanguagePreferences.ranges(uiLocales: ui) + LanguagePreferences.ranges(acceptLanguage: accept),
                                   in: available)
    }

    func testUILocalesComeFirstInTheirOrderAndUnknownTagsAreSkipped() {
        XCTAssertEqual(choose(ui: "fr-CA de en", accept: "en"), "de")
        XCTAssertEqual(choose(ui: "fr ja", accept: "de"), "de")
        XCTAssertEqual(choose(ui: "<script> de", accept: nil), "de")
        XCTAssertNil(choose(ui: "fr", accept: nil))
    }

    func testAcceptLanguageIsReadByWeightThenOrder() {
        XCTAssertEqual(choose(accept: "fr-CH, fr;q=0.9, de;q=0.8, en;q=0.7"), "de")
        XCTAssertEqual(choose(accept: "en;q=0.5, de"), "de")
        XCTAssertEqual(choose(accept: "de;q=0.5, en;q=0.5"), "de", "ties keep the order sent")
        XCTAssertEqual(choose(accept: "de;q=0, en"), "en", "q=0 is 'not acceptable'")
        XCTAssertEqual(choose(accept: "*, de;q=0.1"), "de", "* names no language")
        XCTAssertEqual(choose(accept: "de;q=2, en"), "en", "a qvalue above 1 is no qvalue: weight 0")
        XCTAssertNil(choose(accept: "fr"))
        XCTAssertNil(choose(accept: ""))
    }

    /// RFC 9110 §12.4.2: "A weight of 0 means 'not acceptable'": a refused
    /// language is not chosen, not even as the default.
    func testAZeroWeightRefusesALanguageEvenAsTheDefault() throws {
        let catalogue = try MessageCatalogue(tables: ["en": [:], "de": [:]], defaultLanguage: "en")
        XCTAssertEqual(catalogue.messages(acceptLanguage: "de;q=0, en").language, "en")
        XCTAssertEqual(catalogue.messages(acceptLanguage: "en;q=0").language, "de", "the default is refused: the other language")
        XCTAssertEqual(catalogue.messages(acceptLanguage: "fr, en;q=0.000").language, "de")
        XCTAssertEqual(catalogue.messages(acceptLanguage: "en;q=0, de;q=0").language, "en", "everything refused: the default (§12.5.4)")
        XCTAssertEqual(catalogue.messages(acceptLanguage: "en;q=2").language, "en", "no qvalue is no refusal")
        XCTAssertEqual(catalogue.messages(uiLocales: "en", acceptLanguage: "en;q=0").language, "en", "ui_locales still comes first")
        XCTAssertEqual(LanguagePreferences.refused(acceptLanguage: "de;q=0, en-GB;Q=0.0, fr;q=0.5, *;q=0"), ["de", "en-gb"])
    }

    /// nginx's maps (the static pages) choose what `LanguagePreferences`
    /// chooses (the responders' pages), header for header. ICU's regular
    /// expressions stand in for nginx's PCRE: the patterns use only what
    /// both read alike (lookaround, lazy repeats, classes).
    func testNginxLanguageMapsChooseAsTheResponders() throws {
        let languages = ["de", "en", "pt-br"]
        let maps = NginxLanguageMaps(languages: languages, defaultLanguage: "en")
        func matches(_ pattern: String, _ header: String) throws -> NSTextCheckingResult? {
            try NSRegularExpression(pattern: pattern, options: .caseInsensitive)
                .firstMatch(in: header, range: NSRange(header.startIndex..., in: header))
        }
        func nginx(_ header: String) throws -> String {
            if let match = try matches(maps.offeredPattern, header), let range = Range(match.range(at: 1), in: header) {
                return header[range].lowercased()
            }
            return try maps.fallbackEntries.first { try matches($0.pattern, header) != nil }?.language ?? maps.defaultLanguage
        }
        let headers = ["de;q=0, en", "de;q=0", "en;q=0", "en;q=0.000, de;q=0.5", "de;q=0.001", "de;q=0.0001, en", "de;q=1.0, en",
                       "de;q=2, en", "DE-ch, en", "de-CH;q=0, de", "fr, de ; q=0.5", "pt-BR", "pt-PT, de", "en;q=0, de;q=0",
                       "en;q=0, pt-br;q=0", "*, de;q=0.1", "", "fr", "de_DE, en", "xde, de", "de;q=0.,en", "en-US;q=0, de"]
        for header in headers {
            let responders = LanguagePreferences.choose(uiLocales: nil, acceptLanguage: header, available: Set(languages),
                                                        defaultLanguage: "en")
            XCTAssertEqual(try nginx(header), responders, header.debugDescription)
        }
        XCTAssertEqual(try nginx("de;q=0, en"), "en")
        XCTAssertEqual(try nginx("en;q=0"), "de")
        XCTAssertTrue(maps.text.contains("default $gatehouse_lang_fallback;"))
    }

    func testLookupShortensARangeFromTheEnd() {
        XCTAssertEqual(choose(accept: "de-CH-1996"), "de")
        XCTAssertEqual(choose(accept: "pt-BR"), "pt-br")
        XCTAssertNil(choose(accept: "pt-PT"), "pt alone has no catalogue")
        // RFC 4647 §3.4's example: a single-letter subtag goes with the one after it.
        XCTAssertEqual(LanguagePreferences.lookup(["zh-hant-cn-x-private1"], in: ["zh-hant-cn"]), "zh-hant-cn")
    }

    func testAHugeHeaderReadsOnlyItsFirstRanges() {
        let header = Array(repeating: "fr", count: 5000).joined(separator: ",") + ",de"
        XCTAssertNil(choose(accept: header))
        XCTAssertEqual(LanguagePreferences.ranges(acceptLanguage: header).count, LanguagePreferences.maximumRanges)
    }

    func testTagsAreNormalisedAndOnlyTagsAreTags() {
        XCTAssertEqual(LanguagePreferences.normalisedTag("DE-ch"), "de-ch")
        for bad in ["", "d", "deutsch", "de_DE", "de-", "../de", "de\u{0}", "de-toolongsubtag", "éé"] {
            XCTAssertNil(LanguagePreferences.normalisedTag(bad), bad)
        }
    }

    func testMessagesFillTheirValuesAndEscapeOnlyTheText() throws {
        let catalogue = try MessageCatalogue(tables: ["en": ["hello": "Hello <{name}> & {missing}", "only.en": "English"],
                                                      "de": ["hello": "Hallo {name}"]], defaultLanguage: "en")
        let english = catalogue.messages("en")
        XCTAssertEqual(english.text("hello", ["name": "Ann"]), "Hello <Ann> & {missing}")
        XCTAssertEqual(english.html("hello", ["name": "<b>Ann</b>"]), "Hello &lt;<b>Ann</b>&gt; &amp; {missing}")
        XCTAssertEqual(catalogue.messages("de").text("only.en"), "English", "a missing translation falls back to the default")
        XCTAssertEqual(english.text("no.such.key"), "no.such.key")
        XCTAssertEqual(catalogue.messages(uiLocales: "de", acceptLanguage: "en").language, "de")
        XCTAssertEqual(catalogue.messages(uiLocales: nil, acceptLanguage: "fr").language, "en")
        XCTAssertEqual(catalogue.messages("xx").language, "en")
    }

    func testATemplateTakesTextsEscapedAndMarkupValuesAsTheyAre() throws {
        let messages = Messages(language: "de", texts: ["title": "Anmelden & los", "retry": "in {minutes} Minuten"])
        let page = try PageTemplate.render("<html lang=\"{{lang}}\"><h1>{{title}}</h1>{{ retry|minutes=$wait}}</html>", messages: messages)
        XCTAssertEqual(page, "<html lang=\"de\"><h1>Anmelden &amp; los</h1>in $wait Minuten</html>")
        XCTAssertThrowsError(try PageTemplate.render("{{no.such.key}}", messages: messages)) { error in
            XCTAssertTrue("\(error)".contains("no.such.key"))
        }
        XCTAssertThrowsError(try PageTemplate.render("{{title", messages: messages))
        XCTAssertThrowsError(try PageTemplate.render("{{retry|minutes}}", messages: messages))
    }

    func testBrandColoursNeedContrastAndChooseTheTextOnTheButton() throws {
        XCTAssertNil(try BrandColours(light: nil, dark: nil))
        let teal = try XCTUnwrap(BrandColours(light: "#0f766e", dark: nil))
        XCTAssertEqual(teal.light.hex, "#0f766e")
        XCTAssertGreaterThanOrEqual(BrandColours.contrast(teal.dark, BrandColours.darkSurface), 4.5, "derived for the dark card")
        XCTAssertTrue(teal.css.contains("--accent: #0f766e; --accent-hover: #0c5e58; --on-accent: #ffffff;"))
        // WCAG's own reference points: black on white is 21:1.
        XCTAssertEqual(BrandColours.contrast(BrandColours.RGB(hex: "#000000")!, BrandColours.RGB(hex: "#ffffff")!), 21, accuracy: 0.01)
        XCTAssertThrowsError(try BrandColours(light: "#ffff66", dark: nil)) { error in
            XCTAssertTrue("\(error)".contains("has a contrast of 1.0:1"), "\(error)")
        }
        XCTAssertThrowsError(try BrandColours(light: "#0f766e", dark: "#000000"))
        for bad in ["0f766e", "#0f766", "#0f766g", "#+f766e", "red", "#0f766e0"] {
            XCTAssertThrowsError(try BrandColours(light: bad, dark: nil), bad)
        }
        XCTAssertThrowsError(try BrandColours(light: nil, dark: "#8eaeff"))
    }

    func testBrandSettingsRefuseWhatCannotBeShown() throws {
        XCTAssertEqual(try BrandSettings(values: [:]).name, "Gatehouse")
        XCTAssertEqual(try BrandSettings(values: ["GATEHOUSE_BRAND_NAME": "Acme ID"]).name, "Acme ID")
        for bad in ["Acme\nID", " Acme", "{brand}", String(repeating: "x", count: 41), "Acme\u{85}"] {
            XCTAssertThrowsError(try BrandSettings(values: ["GATEHOUSE_BRAND_NAME": bad]), bad)
        }
        XCTAssertThrowsError(try BrandSettings(values: ["GATEHOUSE_BRAND_LOGO": "/etc/passwd"]))
        XCTAssertEqual(try BrandSettings(values: ["GATEHOUSE_BRAND_LOGO": "/srv/logo.png"]).logoURL, "/img/brand-logo.png")
        XCTAssertThrowsError(try BrandSettings(values: ["GATEHOUSE_DEFAULT_LANGUAGE": "german"]))
    }

    func testTheRendererWritesEveryLanguageTheCataloguesAndNginxMaps() throws {
        let root = NSTemporaryDirectory() + "pages-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let www = root + "/www"
        try FileManager.default.createDirectory(atPath: www + "/locales", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: www + "/css", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        func write(_ path: String, _ text: String) { XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(text.utf8)), path) }
        write(www + "/locales/en.json", #"{"title": "Welcome to {brand}"}"#)
        write(www + "/locales/de.json", #"{"title": "Willkommen bei {brand}"}"#)
        write(www + "/index.html", "<html lang=\"{{lang}}\"><title>{{title}}</title><img src=\"{{brand.logo}}\"></html>")
        write(www + "/css/gatehouse.css", "body {}\n")
        write(www + "/.secret", "never copied")
        let brand = try BrandSettings(values: ["GATEHOUSE_BRAND_NAME": "Acme & Co", "GATEHOUSE_BRAND_COLOR": "#0f766e"])
        let output = root + "/pages"
        XCTAssertEqual(try PageRenderer(source: www, output: output, brand: brand).render(), ["de", "en"])
        func read(_ path: String) -> String? { FileManager.default.contents(atPath: output + "/" + path).map { String(decoding: $0, as: UTF8.self) } }
        XCTAssertEqual(read("de/index.html"), "<html lang=\"de\"><title>Willkommen bei Acme &amp; Co</title><img src=\"/img/gatehouse.svg\"></html>")
        XCTAssertEqual(read("en/index.html"), "<html lang=\"en\"><title>Welcome to Acme &amp; Co</title><img src=\"/img/gatehouse.svg\"></html>")
        XCTAssertTrue(read("en/css/gatehouse.css")?.hasPrefix("body {}\n\n/* The deployment's brand colours") == true)
        XCTAssertNil(read("en/.secret"))
        XCTAssertNil(read("en/locales/en.json"), "the catalogues are the input, not the site")
        let german = try MessageCatalogue.readTable(path: output + "/messages/de.json")
        XCTAssertEqual(german["title"], "Willkommen bei Acme & Co")
        XCTAssertEqual(german["brand.name"], "Acme & Co")
        let maps = try XCTUnwrap(read("languages.conf"))
        XCTAssertTrue(maps.contains("    de de;\n    en en;\n"))
        XCTAssertTrue(maps.contains(NginxLanguageMaps(languages: ["de", "en"], defaultLanguage: "en").offeredPattern))
        XCTAssertTrue(maps.contains("default en;"))

        // A second run replaces the tree whole; a failing run leaves it alone.
        write(www + "/index.html", "{{no.such.key}}")
        XCTAssertThrowsError(try PageRenderer(source: www, output: output, brand: brand).render()) { error in
            XCTAssertTrue("\(error)".contains("index.html"), "\(error)")
        }
        XCTAssertEqual(read("de/index.html")?.hasPrefix("<html lang=\"de\">"), true)
        let noGerman = try BrandSettings(values: ["GATEHOUSE_DEFAULT_LANGUAGE": "fr"])
        XCTAssertThrowsError(try PageRenderer(source: www, output: output, brand: noGerman).render())
    }
}
