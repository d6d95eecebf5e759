import ArgumentParser
import Foundation
import SSOCore

/// `ssoctl pages`: the static pages for every language, branded.
struct PagesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pages",
        abstract: "Render the sign-in pages for every language, with the product name, logo and colours of the settings.",
        discussion: """
            Reads the templates and catalogues of --source (www/ of the Gatehouse tree; its locales/ holds one \
            LANGUAGE.json per language) and the deployment's own catalogues in $GATEHOUSE_LOCALES_DIR, and writes \
            $GATEHOUSE_PAGES_DIR (default $GATEHOUSE_HOME/pages): one folder per language for nginx, messages/ for the \
            responders, and languages.conf, nginx's choice of language. The settings are GATEHOUSE_BRAND_NAME, \
            GATEHOUSE_BRAND_LOGO, GATEHOUSE_BRAND_COLOR, GATEHOUSE_BRAND_COLOR_DARK and GATEHOUSE_DEFAULT_LANGUAGE. \
            Run it after changing any of them, then reload nginx and restart the responders. Scripts/run runs it at \
            every start. Not an audited change: it stores nothing but what the settings and www/ already say.
            """)

    @Option(help: "The www/ folder with the templates and locales/ (default: $GATEHOUSE_WWW_DIR, else ./www).")
    var source: String?

    func run() throws {
        let config = attempt { try GatehouseConfig.load() }
        let source = self.source ?? ProcessInfo.processInfo.environment["GATEHOUSE_WWW_DIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "www"
        let renderer = PageRenderer(source: source, output: config.pagesDirectory, brand: config.brand)
        let languages = attempt { try renderer.render() }
        print("pages: \(languages.joined(separator: ", ")) in \(config.pagesDirectory) (default \(config.brand.defaultLanguage))")
    }
}
