import FoundationEssentials

/// The texts of every page in one language: a flat JSON object from key
/// ("login.title") to text ("Sign in"). A text may name values in braces
/// ("Signed in as {name}."), which the page fills in.
///
/// The issuer's pages are built from these and nothing else: the static
/// pages when `ssoctl pages` renders them, the pages the responders build
/// (account, errors, sign-out) when they answer. One file per language in
/// `www/locales/`; a deployment adds a language, or changes a text, with a
/// file of its own in `GATEHOUSE_LOCALES_DIR` (README "Branding and languages").
public struct Messages: Sendable {
    public let language: String
    let texts: [String: String]
    /// The default language's texts: a key a translation lacks shows in the
    /// default language rather than as a key.
    let fallback: [String: String]

    public init(language: String, texts: [String: String], fallback: [String: String] = [:]) {
        self.language = language
        self.texts = texts
        self.fallback = fallback
    }

    /// The plain text of `key` with `{name}` replaced by `values[name]`. A key
    /// no catalogue has shows as itself, so a missing text is visible on the
    /// page and in tests, never a crash.
    public func text(_ key: String, _ values: [String: String] = [:]) -> String {
        Self.fill(texts[key] ?? fallback[key] ?? key, values)
    }

    /// The text of `key` as HTML: the text escaped, then `{name}` replaced by
    /// `values[name]`, which the caller has made HTML (escaped values, or
    /// markup such as `<strong>…</strong>` around one).
    public func html(_ key: String, _ values: [String: String] = [:]) -> String {
        Self.fill(HTMLEscaping.escape(texts[key] ?? fallback[key] ?? key), values)
    }

    public var keys: Set<String> { Set(texts.keys) }

    /// Replaces each `{name}` whose name is in `values`; other braces stay.
    static func fill(_ text: String, _ values: [String: String]) -> String {
        guard !values.isEmpty, text.contains("{") else { return text }
        var output = ""
        var rest = Substring(text)
        while let open = rest.firstIndex(of: "{") {
            output += rest[..<open]
            let afterOpen = rest.index(after: open)
            if let close = rest[afterOpen...].firstIndex(of: "}"), let value = values[String(rest[afterOpen..<close])] {
                output += value
                rest = rest[rest.index(after: close)...]
            } else {
                output += "{"
                rest = rest[afterOpen...]
            }
        }
        return output + rest
    }
}

public struct CatalogueError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Every language's `Messages`, and the choice among them for a request.
public struct MessageCatalogue: Sendable {
    public let defaultLanguage: String
    public let languages: [String: Messages]

    /// Catalogues read from files; `defaultLanguage` must be one of them.
    public init(tables: [String: [String: String]], defaultLanguage: String) throws {
        guard let fallback = tables[defaultLanguage] else {
            throw CatalogueError("no catalogue for the default language \(defaultLanguage)")
        }
        self.defaultLanguage = defaultLanguage
        languages = tables.reduce(into: [:]) { result, entry in
            result[entry.key] = Messages(language: entry.key, texts: entry.value, fallback: fallback)
        }
    }

    /// No texts at all: every page shows its keys. For code that builds no page.
    public static let empty = try! MessageCatalogue(tables: ["en": [:]], defaultLanguage: "en")

    public var available: Set<String> { Set(languages.keys) }

    public var defaultMessages: Messages { languages[defaultLanguage]! }

    public func messages(_ language: String) -> Messages { languages[language] ?? defaultMessages }

    /// A request's language: `uiLocales` (when the endpoint takes the
    /// parameter) first, then its `Accept-Language`, then the default.
    public func messages(for request: Request, uiLocales: String? = nil) -> Messages {
        messages(uiLocales: uiLocales, acceptLanguage: request.header("accept-language"))
    }

    /// `ui_locales` first, then `Accept-Language`, then the default (or,
    /// when the header refuses it with `q=0`, a language it does not refuse).
    public func messages(uiLocales: String? = nil, acceptLanguage: String?) -> Messages {
        messages(LanguagePreferences.choose(uiLocales: uiLocales, acceptLanguage: acceptLanguage, available: available,
                                            defaultLanguage: defaultLanguage))
    }

    /// Reads every `LANGUAGE.json` in `directory` (one flat object of
    /// strings each); a file named otherwise is ignored.
    public static func readTables(directory: String) throws -> [String: [String: String]] {
        var tables: [String: [String: String]] = [:]
        for name in DirectoryNames.of(directory).sorted() where name.hasSuffix(".json") {
            guard let language = LanguagePreferences.normalisedTag(name.dropLast(5)) else { continue }
            tables[language] = try readTable(path: directory + "/" + name)
        }
        return tables
    }

    public static func readTable(path: String) throws -> [String: String] {
        guard let data = FileManager.default.contents(atPath: path) else { throw CatalogueError("cannot read \(path)") }
        do {
            return try JSON.decoder.decode([String: String].self, from: data)
        } catch {
            throw CatalogueError("\(path) is not a JSON object of strings: \(error)")
        }
    }

    /// The languages of the catalogues in `directory` (`LANGUAGE.json`),
    /// sorted, without reading them.
    public static func languages(directory: String) -> [String] {
        DirectoryNames.of(directory).filter { $0.hasSuffix(".json") }.compactMap { LanguagePreferences.normalisedTag($0.dropLast(5)) }.sorted()
    }

    /// What the responders load: the catalogues `ssoctl pages` wrote, with
    /// the product name already in their texts.
    public static func load(directory: String, defaultLanguage: String) throws -> MessageCatalogue {
        let tables = try readTables(directory: directory)
        guard !tables.isEmpty else { throw CatalogueError("no message catalogues in \(directory): run ssoctl pages") }
        return try MessageCatalogue(tables: tables, defaultLanguage: defaultLanguage)
    }
}
