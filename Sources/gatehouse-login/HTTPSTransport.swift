import Foundation
import SSOCore

/// A small blocking HTTPS client: one request per connection, HTTP/1.0 so the
/// reply is never chunked, OpenSSL with peer and host name verification.
/// Enough for discovery, JWKS, the token, revocation and end-session
/// endpoints, and a resource server's GET.
struct HTTPSTransport {
    /// PEM file of trusted CAs; nil trusts the system's default CA paths.
    var caFile: String?
    /// Longest the whole exchange may take, connection included.
    var timeout: Double = 20
    var maximumResponseBytes = 1024 * 1024

    func get(_ url: String, headers: [(String, String)] = []) throws -> HTTPReply {
        try send(method: "GET", url: url, headers: headers, body: [])
    }

    /// An application/x-www-form-urlencoded POST (RFC 6749 §4.1.3, RFC 7009 §2.1).
    func postForm(_ url: String, _ form: [(String, String)]) throws -> HTTPReply {
        try send(method: "POST", url: url, headers: [("Content-Type", "application/x-www-form-urlencoded")],
                 body: Array(FormParser.encode(form).utf8))
    }

    func send(method: String, url: String, headers: [(String, String)], body: [UInt8]) throws -> HTTPReply {
        let target = try HTTPSTarget(url)
        let deadline = Deadline(seconds: timeout)
        do {
            let tcp = try TCPStream.connect(host: target.host, port: target.port, timeout: min(5, timeout))
            let stream = try TLSStream(context: try TLSContext(caFile: caFile), tcp: tcp, host: target.host)
            var head = "\(method) \(target.pathAndQuery) HTTP/1.0\r\nHost: \(target.hostHeader)\r\n"
                + "User-Agent: gatehouse-login\r\nAccept: application/json\r\nConnection: close\r\n"
            for (name, value) in headers {
                // No header may smuggle a line break into the request.
                guard !(name + value).utf8.contains(where: { $0 == 13 || $0 == 10 }) else { throw ToolError("bad header \(name)") }
                head += "\(name): \(value)\r\n"
            }
            if method == "POST" || !body.isEmpty { head += "Content-Length: \(body.count)\r\n" }
            try stream.write(Array((head + "\r\n").utf8) + body, deadline: deadline)
            return try readReply(stream, deadline: deadline)
        } catch let error as ToolError {
            throw ToolError("\(method) \(target.origin): \(error.message)")
        }
    }

    /// Reads until the body announced by Content-Length is complete, or to
    /// the peer's close_notify when there is none.
    private func readReply(_ stream: TLSStream, deadline: Deadline) throws -> HTTPReply {
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        var head: HTTPReply.Head?
        while true {
            let count = try stream.read(into: &chunk, deadline: deadline)
            if count == 0 { break }
            received.append(contentsOf: chunk.prefix(count))
            guard received.count <= maximumResponseBytes else { throw ToolError("response larger than \(maximumResponseBytes) bytes") }
            if head == nil { head = try HTTPReply.Head.parse(received) }
            if let head, let length = head.contentLength, received.count >= head.bodyOffset + length { break }
        }
        guard let head = try head ?? HTTPReply.Head.parse(received) else {
            throw ToolError("connection closed before the end of the response headers")
        }
        return try head.reply(from: received)
    }
}
