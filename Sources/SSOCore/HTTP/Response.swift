import FoundationEssentials

/// One HTTP response: status, headers in order, body bytes.
public struct Response: Sendable {
    public var status: Int
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]
    /// For the request log only, never sent: why an error page or an error
    /// redirect was answered (the wire says less than the operator needs).
    public var logDetail: String?

    public init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    public func header(_ name: String) -> String? {
        headers.first { Self.sameName($0.name, name) }?.value
    }

    public mutating func setHeader(_ name: String, _ value: String) {
        headers.removeAll { Self.sameName($0.name, name) }
        headers.append((name, value))
    }

    /// RFC 9110 §5.1: "Field names are case-insensitive". Compared on the
    /// bytes with ASCII case folding (names are tokens, RFC 9110 §5.6.2), without
    /// the two Strings `lowercased()` built for every comparison.
    static func sameName(_ left: String, _ right: String) -> Bool {
        left.utf8.elementsEqual(right.utf8) { a, b in
            a == b || (a | 0x20 == b | 0x20 && (0x61...0x7A).contains(a | 0x20))
        }
    }

    /// The same response, with `detail` for the request log.
    public func logging(_ detail: String) -> Response {
        var copy = self
        copy.logDetail = detail
        return copy
    }

    public mutating func addCookie(_ cookie: SetCookie) {
        headers.append(("Set-Cookie", cookie.headerValue))
    }

    public static func json<T: Encodable>(_ value: T, status: Int = 200, headers: [(name: String, value: String)] = []) throws -> Response {
        Response(status: status, headers: [("Content-Type", "application/json")] + headers, body: try JSON.encode(value))
    }

    public static func html(_ html: String, status: Int = 200) -> Response {
        Response(status: status, headers: [("Content-Type", "text/html; charset=utf-8"), ("Cache-Control", "no-store")], body: Array(html.utf8))
    }

    /// 303 See Other: the browser follows with GET, whatever the method was.
    public static func redirect(to location: String, status: Int = 303) -> Response {
        Response(status: status, headers: [("Location", location), ("Cache-Control", "no-store")])
    }

    /// A plain error for requests that never reach protocol handling
    /// (wrong method, oversized body, ...).
    public static func plainError(_ status: Int, _ message: String, headers: [(name: String, value: String)] = []) -> Response {
        let body = (try? JSON.encode(["error": message])) ?? Array("{}".utf8)
        return Response(status: status, headers: [("Content-Type", "application/json"), ("Cache-Control", "no-store")] + headers, body: body)
    }

    public static func methodNotAllowed(allowed: [String]) -> Response {
        plainError(405, "method_not_allowed", headers: [("Allow", allowed.joined(separator: ", "))])
    }

    /// The CGI/FastCGI wire form: a `Status:` line, headers, blank line, body.
    /// A header whose name or value holds a control character is dropped, so
    /// no input can ever split the response (CWE-113).
    /// Written straight into one byte array: building it as a String by
    /// interpolation and copying that out was a tenth of an empty request.
    public func serialized() -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(256 + headers.count * 48 + body.count)
        func line(_ name: String, _ value: String) {
            bytes.append(contentsOf: name.utf8)
            bytes.append(contentsOf: ": ".utf8)
            bytes.append(contentsOf: value.utf8)
            bytes.append(contentsOf: "\r\n".utf8)
        }
        line("Status", "\(status) \(Self.reasonPhrase(status))")
        for (name, value) in headers where Self.isSafeHeader(name: name, value: value) { line(name, value) }
        if header("content-length") == nil { line("Content-Length", String(body.count)) }
        bytes.append(contentsOf: "\r\n".utf8)
        bytes.append(contentsOf: body)
        return bytes
    }

    static func isSafeHeader(name: String, value: String) -> Bool {
        !name.isEmpty && name.utf8.allSatisfy { $0 > 32 && $0 < 127 && $0 != UInt8(ascii: ":") }
            && value.utf8.allSatisfy { $0 >= 32 && $0 != 127 || $0 == 9 }
    }

    static func reasonPhrase(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 201: "Created"
        case 204: "No Content"
        case 302: "Found"
        case 303: "See Other"
        case 304: "Not Modified"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 413: "Content Too Large"
        case 415: "Unsupported Media Type"
        case 429: "Too Many Requests"
        case 500: "Internal Server Error"
        case 503: "Service Unavailable"
        default: "Status"
        }
    }
}
