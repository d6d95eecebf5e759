import Glibc
import FoundationEssentials

/// `ssoctl pages`: `www/` as the browser gets it, once per language.
///
/// Output (`GATEHOUSE_PAGES_DIR`, `$GATEHOUSE_HOME/pages` by default):
/// - `LANG/`: the whole site for that language: every `.html` template
///   filled from the catalogue, every other file copied, the brand's logo and
///   colours added. nginx serves `root …/pages/$gatehouse_lang`.
/// - `messages/LANG.json`: the same texts for the pages the responders
///   build (account, errors, sign-out), the product name filled in.
/// - `languages.conf`: nginx `map`s from `?lang=` and `Accept-Language` to
///   one of these languages, so nginx picks a page the way the responders do.
///
/// The new tree is written beside the old one and swapped in, so nginx never
/// serves a half-written site.
public struct PageRenderer {
    public let source: String
    public let output: String
    public let brand: BrandSettings

    public init(source: String, output: String, brand: BrandSettings) {
        self.source = source
        self.output = output
        self.brand = brand
    }

    /// The catalogues as the pages use them: `www/locales/`, then the
    /// deployment's own files over them key by key, `{brand}` filled in.
    public func tables() throws -> [String: [String: String]] {
        var tables = try MessageCatalogue.readTables(directory: source + "/locales")
        if let overlay = brand.localesDirectory {
            for (language, texts) in try MessageCatalogue.readTables(directory: overlay) {
                tables[language, default: [:]].merge(texts) { _, theirs in theirs }
            }
        }
        guard tables[brand.defaultLanguage] != nil else {
            throw CatalogueError("no catalogue for the default language \(brand.defaultLanguage) in \(source)/locales"
                + (brand.localesDirectory.map { " or \($0)" } ?? ""))
        }
        for language in tables.keys {
            tables[language] = tables[language]!.mapValues { $0.replacing("{brand}", with: brand.name) }
            tables[language]!["brand.name"] = brand.name
            tables[language]!["brand.logo"] = brand.logoURL
        }
        return tables
    }

    /// Renders everything; returns the languages written.
    @discardableResult
    public func render() throws -> [String] {
        let catalogue = try MessageCatalogue(tables: try tables(), defaultLanguage: brand.defaultLanguage)
        let staging = output + ".new"
        let files = FileManager.default
        try? files.removeItem(atPath: staging)
        // A failure leaves the tree nginx serves as it was, and no half of a new one.
        do {
            try renderTree(catalogue, into: staging)
        } catch {
            try? files.removeItem(atPath: staging)
            throw error
        }
        try swapIn(staging)
        return catalogue.available.sorted()
    }

    func renderTree(_ catalogue: MessageCatalogue, into staging: String) throws {
        let files = FileManager.default
        try files.createDirectory(atPath: staging + "/messages", withIntermediateDirectories: true)
        let languages = catalogue.available.sorted()
        let sourceFiles = try siteFiles()
        for language in languages {
            let messages = catalogue.messages(language)
            for path in sourceFiles {
                let target = staging + "/" + language + "/" + path
                try files.createDirectory(atPath: parentDirectory(of: target), withIntermediateDirectories: true)
                guard var bytes = files.contents(atPath: source + "/" + path) else { throw CatalogueError("cannot read \(source)/\(path)") }
                if path.hasSuffix(".html") {
                    do {
                        bytes = Data(try PageTemplate.render(String(decoding: bytes, as: UTF8.self), messages: messages).utf8)
                    } catch let error as CatalogueError {
                        throw CatalogueError("\(path): \(error.description)")
                    }
                } else if path == "css/gatehouse.css", let colours = brand.colours {
                    bytes.append(contentsOf: Array(colours.css.utf8))
                }
                try write(bytes, to: target)
            }
            if let logo = brand.logoPath {
                guard let bytes = files.contents(atPath: logo), bytes.count <= 512 * 1024 else {
                    throw CatalogueError("GATEHOUSE_BRAND_LOGO \(logo) cannot be read or is over 512 KB")
                }
                try write(bytes, to: staging + "/" + language + brand.logoURL)
            }
            try write(Data(try JSON.encode(messages.texts)), to: staging + "/messages/" + language + ".json")
        }
        try write(Data(NginxLanguageMaps(languages: languages, defaultLanguage: brand.defaultLanguage).text.utf8),
                  to: staging + "/languages.conf")
    }

    /// Every file of the site, relative to `source`: not the catalogues
    /// (they are the input), not hidden files.
    func siteFiles() throws -> [String] {
        var paths: [String] = []
        func walk(_ relative: String) throws {
            let directory = relative.isEmpty ? source : source + "/" + relative
            var info = stat()
            guard stat(directory, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else { throw CatalogueError("cannot read \(directory)") }
            for name in DirectoryNames.of(directory).sorted() where !name.hasPrefix(".") {
                let path = relative.isEmpty ? name : relative + "/" + name
                if path == "locales" { continue }
                guard stat(source + "/" + path, &info) == 0 else { continue }
                if info.st_mode & S_IFMT == S_IFDIR { try walk(path) } else if info.st_mode & S_IFMT == S_IFREG { paths.append(path) }
            }
        }
        try walk("")
        return paths
    }

    func write(_ bytes: Data, to path: String) throws {
        guard FileManager.default.createFile(atPath: path, contents: bytes) else { throw CatalogueError("cannot write \(path)") }
    }

    /// The old tree out, the new one in: two renames, nothing half-written.
    func swapIn(_ staging: String) throws {
        let files = FileManager.default
        let old = output + ".old"
        try? files.removeItem(atPath: old)
        if files.fileExists(atPath: output) { try files.moveItem(atPath: output, toPath: old) }
        try files.moveItem(atPath: staging, toPath: output)
        try? files.removeItem(atPath: old)
    }
}
