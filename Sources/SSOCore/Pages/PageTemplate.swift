/// A page of `www/` with its texts left out: `{{key}}` stands for the
/// catalogue's text of `key`, HTML-escaped. `{{key|name=value}}` fills the
/// text's `{name}` with `value`, which is template markup taken as it is
/// (nginx SSI, say: `{{login.retry_in|minutes=<!--# echo var="wait" -->}}`).
/// `{{lang}}` is the page's language tag.
///
/// A key no catalogue has is an error, so a typo fails `ssoctl pages` and
/// the tests instead of reaching a page.
public enum PageTemplate {
    public static func render(_ template: String, messages: Messages) throws -> String {
        var output = ""
        output.reserveCapacity(template.utf8.count + template.utf8.count / 4)
        var rest = Substring(template)
        while let open = rest.firstRange(of: "{{") {
            output += rest[..<open.lowerBound]
            guard let close = rest[open.upperBound...].firstRange(of: "}}") else {
                throw CatalogueError("an unclosed {{ at \(String(rest[open.lowerBound...].prefix(40)))")
            }
            output += try expand(rest[open.upperBound..<close.lowerBound], messages: messages)
            rest = rest[close.upperBound...]
        }
        return output + rest
    }

    static func expand(_ placeholder: Substring, messages: Messages) throws -> String {
        var parts = placeholder.split(separator: "|", omittingEmptySubsequences: false)
        let key = String(parts.removeFirst()).trimmingASCIIWhitespace()
        if key == "lang" { return messages.language }
        guard messages.texts[key] != nil || messages.fallback[key] != nil else {
            throw CatalogueError("no text for {{\(key)}} in the \(messages.language) catalogue")
        }
        var values: [String: String] = [:]
        for part in parts {
            guard let equals = part.firstIndex(of: "=") else { throw CatalogueError("{{\(key)|\(part)}}: a value needs name=value") }
            values[String(part[..<equals])] = String(part[part.index(after: equals)...])
        }
        return messages.html(key, values)
    }
}
