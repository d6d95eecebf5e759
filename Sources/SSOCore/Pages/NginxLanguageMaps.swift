/// `languages.conf`: nginx's choice of the static pages' language, the
/// choice `LanguagePreferences.choose` makes for the pages the responders
/// build, in `map`s nginx can run on every request:
/// - `?lang=` (the issuer sets it from `ui_locales`) when it names a language;
/// - else the first `Accept-Language` range, in the order sent, that names
///   one of the languages (or a subtag of one: "de-CH" is German) with a
///   weight above zero (browsers send their ranges by falling weight);
/// - else the default language, unless the header refuses it (`en;q=0`):
///   then the first other language, in tag order, that it does not refuse.
///
/// RFC 9110 §12.4.2: "A weight of 0 means 'not acceptable'", so a range
/// with `q=0` (or `0.0`, `0.00`, `0.000`) is never chosen; neither is one
/// whose weight is no qvalue at all (`q=2`), which `LanguagePreferences`
/// leaves out too. Every value a map can yield is one of `languages`, so
/// `root …/pages/$gatehouse_lang` always names a folder that exists.
public struct NginxLanguageMaps {
    /// Sorted, normalised tags (`ssoctl pages` renders one site each).
    public let languages: [String]
    public let defaultLanguage: String

    public init(languages: [String], defaultLanguage: String) {
        self.languages = languages.sorted()
        self.defaultLanguage = defaultLanguage
    }

    /// A tag inside a pattern ("pt-br" → "pt\-br").
    static func literal(_ tag: String) -> String { tag.replacing("-", with: "\\-") }

    /// RFC 9110 §12.4.2 `weight = OWS ";" OWS "q=" qvalue` with a qvalue
    /// above zero: `1`, `1.`, `1.000`, or `0.` and up to three digits that
    /// are not all zero.
    static let positiveWeight = #"\s*;\s*q=(?:1(?:\.0{0,3})?|0\.(?=\d{0,3}(?!\d))0*[1-9]\d*)"#

    /// Captures the language of the first acceptable range (case as sent;
    /// the next map lowers it). Longer tags are tried first, so "pt-BR"
    /// finds pt-br before pt.
    public var offeredPattern: String {
        let alternatives = languages.sorted { $0.count > $1.count }.map(Self.literal).joined(separator: "|")
        return #"^(?:[^,]*,)*?\s*("# + alternatives + #")(?:-[0-9a-z]{1,8})*(?:"# + Self.positiveWeight + #")?\s*(?:,|$)"#
    }

    /// Matches a header that refuses `tag` itself: `tag;q=0`.
    public static func refusalPattern(_ tag: String) -> String {
        #"(?:^|,)\s*"# + literal(tag) + #"\s*;\s*q=0(?:\.0{0,3})?\s*(?:,|$)"#
    }

    /// The fallback when no range names a language: each other language,
    /// in tag order, with the pattern of a header that refuses the default
    /// but not it. No match: the default.
    public var fallbackEntries: [(pattern: String, language: String)] {
        languages.filter { $0 != defaultLanguage }.map { language in
            ("^(?=.*" + Self.refusalPattern(defaultLanguage) + ")(?!.*" + Self.refusalPattern(language) + ")", language)
        }
    }

    public var text: String {
        var text = """
            # Written by `ssoctl pages`: the languages this deployment has pages in.
            # $gatehouse_lang is always one of them; nginx serves
            # root <pages>/$gatehouse_lang.
            map $arg_lang $gatehouse_lang_asked {
                default "";

            """
        for language in languages { text += "    \(language) \(language);\n" }
        text += """
            }
            map $http_accept_language $gatehouse_lang_offered {
                default "";
                "~*\(offeredPattern)" $1;
            }
            map $http_accept_language $gatehouse_lang_fallback {
                default \(defaultLanguage);

            """
        for entry in fallbackEntries { text += "    \"~*\(entry.pattern)\" \(entry.language);\n" }
        text += """
            }
            map $gatehouse_lang_offered $gatehouse_lang_browser {
                default $gatehouse_lang_fallback;

            """
        for language in languages { text += "    \"~*^\(Self.literal(language))$\" \(language);\n" }
        text += """
            }
            map $gatehouse_lang_asked $gatehouse_lang {
                "" $gatehouse_lang_browser;
                default $gatehouse_lang_asked;
            }

            """
        return text
    }
}
