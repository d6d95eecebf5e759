import SSOCore

/// Strong entity tags for the admin API's resources (RFC 9110 §8.8.3): a
/// digest of the resource's JSON form, and of what the form leaves out but
/// is still the resource (a client's keys and secret), so any change to it
/// changes the tag, and nothing else does.
enum AdminETag {
    static func of<Value: Encodable>(_ value: Value, also hidden: [String] = []) throws -> String {
        var input = try JSON.encode(value)
        for part in hidden { input += [0] + Array(part.utf8) }
        return "\"" + Base64URL.encode(SHA256.hash(input).prefix(18)) + "\""
    }

    /// RFC 9110 §13.1.1: "An origin server MUST NOT perform the requested
    /// method if the condition evaluates to false"; a received If-Match is
    /// `*` or a list of entity tags, compared strongly (a weak tag never
    /// matches). Without the header there is nothing to check. Run inside
    /// the change's write unit, on the resource as the unit found it.
    static func check(_ request: Request, tag: String) throws {
        guard let header = request.header("if-match") else { return }
        let tags = header.split(separator: ",").map { $0.trimmingASCIIWhitespace() }
        if tags.contains("*") { return }
        guard tags.contains(where: { $0.utf8.elementsEqual(tag.utf8) }) else { throw AdminProblem.preconditionFailed() }
    }

    static func check<Value: Encodable>(_ request: Request, current: Value) throws {
        try check(request, tag: try of(current))
    }

    /// The response to a GET of one resource, or to a change, with its tag.
    static func answer<Value: Encodable>(_ value: Value, tag: String? = nil, status: Int = 200,
                                         headers: [(name: String, value: String)] = []) throws -> Response {
        try .json(value, status: status, headers: [("ETag", try tag ?? of(value))] + headers)
    }
}
