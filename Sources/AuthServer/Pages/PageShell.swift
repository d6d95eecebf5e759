import SSOCore

/// What a page will say, before the language is known: a key of the message
/// catalogue (`www/locales/`) and the plain-text values its `{name}`s take.
/// Errors carry one of these up to the responder, which knows the request's
/// language and renders it.
public struct PageText: Sendable, Equatable, CustomStringConvertible {
    public let key: String
    /// Plain text; escaped when the page is built.
    public let values: [String: String]

    public init(_ key: String, _ values: [String: String] = [:]) {
        self.key = key
        self.values = values
    }

    /// The text as HTML in `messages`' language, every value escaped.
    public func html(_ messages: Messages) -> String { messages.html(key, values.mapValues(HTMLEscaping.escape)) }

    public func text(_ messages: Messages) -> String { messages.text(key, values) }

    public var description: String { values.isEmpty ? key : "\(key) \(values.sorted { $0.key < $1.key })" }
}

/// The frame of every page the responders build (the account pages, the
/// sign-out pages, the error pages), in the look of the static pages
/// (`www/login.html`): the page's language on `<html lang>` and in
/// `Content-Language`, the product's name and logo (the catalogue's
/// `brand.name` and `brand.logo`, which `ssoctl pages` fills in from the
/// brand settings) in the title, the icon and the header. Every value is
/// HTML-escaped; the body is the caller's HTML.
enum PageShell {
    /// `<meta name="referrer">`: the account page's forms post to the
    /// issuer, whose Origin check wants a real value (`same-origin`, as the
    /// login page); every other page keeps the server's `no-referrer`.
    enum Referrer: String {
        case sameOrigin = "same-origin"
        case none = "no-referrer"
    }

    static func response(title: String, body: String, messages: Messages, referrer: Referrer, scripts: [String] = [],
                         status: Int = 200) -> Response {
        let escape = HTMLEscaping.escape
        let name = escape(messages.text("brand.name")), logo = escape(messages.text("brand.logo"))
        let scriptTags = scripts.map { "<script src=\"\(escape($0))\" defer></script>\n" }.joined()
        var response = Response.html("""
            <!doctype html>
            <html lang="\(escape(messages.language))">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <meta name="color-scheme" content="light dark">
            <meta name="referrer" content="\(referrer.rawValue)">
            <title>\(escape(title)) · \(name)</title>
            <link rel="icon" href="\(logo)">
            <link rel="stylesheet" href="/css/gatehouse.css">
            \(scriptTags)</head>
            <body>
            <header class="brand"><img src="\(logo)" alt="" width="32" height="32"><span>\(name)</span></header>
            \(body)
            </body>
            </html>
            """, status: status)
        response.setHeader("Cache-Control", "no-store")
        response.setHeader("Content-Language", messages.language)
        // As the static pages (nginx/page-headers.conf): the language may come from Accept-Language.
        response.setHeader("Vary", "Accept-Language")
        return response
    }
}
