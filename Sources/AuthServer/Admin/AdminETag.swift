import SSOCore

/// Strong entity tags for the admin API's resources (RFC 9110 §8.8.3): a
/// digest of the resource's JSON form, so any change to what a GET shows
/// changes the tag, and nothing else does.
enum AdminETag {
    static func of<Value: Encodable>(_ value: Value) throws -> String {
        "\"" + Base64URL.encode(SHA256.hash(try JSON.encode(value)).prefix(18)) + "\""
    }

    /// RFC 9110 §13.1.1: "An origin server MUST NOT perform the requested
    /// method if the condition evaluates to false"; a received If-Match is
    /// `*` or a list of entity tags, compared strongly (a weak tag never
    /// matches). Without the header there is nothing to check. Run inside
    /// the change's write unit, on the resource as the unit found it.
    static func check<Value: Encodable>(_ request: Request, current: Value) throws {
        guard let header = request.header("if-match") else { return }
        let tags = header.split(separator: ",").map { $0.trimmingASCIIWhitespace() }
        if tags.contains("*") { return }
        let tag = try of(current)
        guard tags.contains(where: { $0.utf8.elementsEqual(tag.utf8) }) else { throw AdminProblem.preconditionFailed() }
    }

    /// The response to a GET of one resource, or to a change, with its tag.
    static func answer<Value: Encodable>(_ value: Value, status: Int = 200, headers: [(name: String, value: String)] = []) throws -> Response {
        try .json(value, status: status, headers: [("ETag", try of(value))] + headers)
    }
}
