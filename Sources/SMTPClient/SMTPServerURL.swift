import FoundationEssentials
import SSOCore
import Glibc

/// `GATEHOUSE_SMTP_URL`: `smtp://[USER:PASSWORD@]HOST[:PORT][/EHLO-NAME]`
/// (STARTTLS) or `smtps://...` (TLS from the first byte). The ports
/// default as libcurl's do: 25 for smtp, 465 for smtps. USER and PASSWORD
/// are percent-decoded; they are kept apart from everything printable, so
/// `description` and every failure detail show the server, never them.
public struct SMTPServerURL: Sendable, CustomStringConvertible {
    public enum Security: String, Sendable {
        /// smtps: TLS from the first byte.
        case implicitTLS = "implicit TLS"
        /// smtp to anything but loopback: STARTTLS or no delivery.
        case startTLSRequired = "STARTTLS required"
        /// smtp to a loopback address: STARTTLS when the server offers it
        /// (a local relay or a test server often does not).
        case startTLSIfOffered = "STARTTLS if offered"
    }

    public struct Invalid: Error, CustomStringConvertible {
        /// Log-safe: never the URL itself, which may carry a password.
        public let description: String
    }

    public let scheme: String
    /// Without brackets for IPv6.
    public let host: String
    public let port: Int
    /// The name libcurl says in EHLO (the URL's path); nil: libcurl's default.
    public let ehloName: String?
    public let security: Security
    let username: String?
    let password: String?

    public var hasCredentials: Bool { username != nil }

    /// `smtp://host:port`: where mail goes, safe for any log.
    public var description: String {
        "\(scheme)://\(host.contains(":") ? "[\(host)]" : host):\(port)"
    }

    /// What libcurl is given: no userinfo (the credentials go in options
    /// of their own, out of any URL libcurl might quote in an error).
    var curlURL: String { description + (ehloName.map { "/" + $0 } ?? "") }

    public init(_ url: String) throws {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
              scheme == "smtp" || scheme == "smtps" else {
            throw Invalid(description: "GATEHOUSE_SMTP_URL is not an smtp:// or smtps:// URL")
        }
        guard var host = components.host, !host.isEmpty else { throw Invalid(description: "GATEHOUSE_SMTP_URL has no host") }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard host.utf8.allSatisfy({ $0 > 32 && $0 < 127 && $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "@") }) else {
            throw Invalid(description: "GATEHOUSE_SMTP_URL's host has a character a host name cannot have")
        }
        let port = components.port ?? (scheme == "smtps" ? 465 : 25)
        guard (1...65535).contains(port) else { throw Invalid(description: "GATEHOUSE_SMTP_URL's port \(port) is out of range") }
        guard components.query == nil, components.fragment == nil else {
            throw Invalid(description: "GATEHOUSE_SMTP_URL has a query or fragment")
        }
        let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        if !path.isEmpty {
            guard (try? MailAddress("postmaster@" + path)) != nil else {
                throw Invalid(description: "GATEHOUSE_SMTP_URL's path (the EHLO name) is not a host name")
            }
        }
        let user = components.user.flatMap { $0.isEmpty ? nil : $0 }
        guard user != nil || (components.password ?? "").isEmpty else {
            throw Invalid(description: "GATEHOUSE_SMTP_URL has a password without a user")
        }
        self.scheme = scheme
        self.host = host
        self.port = port
        ehloName = path.isEmpty ? nil : path
        username = user
        password = user == nil ? nil : components.password ?? ""
        security = scheme == "smtps" ? .implicitTLS : Self.isLoopback(host) ? .startTLSIfOffered : .startTLSRequired
    }

    /// 127.0.0.0/8, ::1 (and its IPv4-mapped form of 127/8), `localhost`.
    /// libcurl resolves `localhost` to loopback itself, without DNS or
    /// /etc/hosts (since 7.78), so the name cannot lead elsewhere.
    public static func isLoopback(_ host: String) -> Bool {
        if host.lowercased() == "localhost" { return true }
        var v4 = in_addr()
        if inet_pton(AF_INET, host, &v4) == 1 { return UInt32(bigEndian: v4.s_addr) >> 24 == 127 }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, host, &v6) == 1 else { return false }
        let bytes = withUnsafeBytes(of: v6) { Array($0) }
        if bytes == [UInt8](repeating: 0, count: 15) + [1] { return true }
        return bytes.prefix(12).elementsEqual([UInt8](repeating: 0, count: 10) + [0xFF, 0xFF]) && bytes[12] == 127
    }
}
