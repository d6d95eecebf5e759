import IssuerStorage
import FoundationEssentials

/// What a registered redirect URI may be (RFC 6749 §3.1.2, RFC 8252 §7).
public enum RedirectURIRules {
    /// Schemes that would run code or read files if a browser followed them.
    static let forbiddenSchemes: Set<String> = ["javascript", "data", "vbscript", "file", "blob", "about"]

    public static func validateForRegistration(_ uri: String) throws {
        guard uri.utf8.count <= 512 else { throw ValidationError("redirect URI longer than 512 bytes") }
        guard uri.unicodeScalars.allSatisfy({ $0.value > 32 && $0.value < 127 }) else {
            throw ValidationError("redirect URI must be printable ASCII without spaces: \(uri.debugDescription)")
        }
        guard let components = URLComponents(string: uri), let scheme = components.scheme?.lowercased() else {
            throw ValidationError("redirect URI is not an absolute URI: \(uri)")
        }
        // RFC 6749 §3.1.2: "The endpoint URI MUST NOT include a fragment component."
        guard components.fragment == nil else { throw ValidationError("redirect URI must not have a fragment: \(uri)") }
        guard !forbiddenSchemes.contains(scheme) else { throw ValidationError("redirect URI scheme \(scheme) is not allowed") }
        // RFC 6749 §4.1.2: the server adds code and state (and RFC 9207 iss,
        // §4.1.2.1 the error parameters) to the redirect URI's query. One
        // registered with any of them would answer with that name twice, and
        // a client could read the registered value instead of the real one.
        if let reserved = components.queryItems?.first(where: { responseParameterNames.contains($0.name) }) {
            throw ValidationError("redirect URI must not carry the response parameter \(reserved.name)= in its query: \(uri)")
        }
        switch scheme {
        case "https":
            guard let host = components.host, !host.isEmpty else { throw ValidationError("https redirect URI needs a host: \(uri)") }
        case "http":
            // RFC 8252 §7.3 and §8.3: plain http only for the loopback IP
            // literal; "localhost" is NOT RECOMMENDED (it may resolve elsewhere).
            guard isLoopbackHost(components.host) else {
                throw ValidationError("http redirect URIs are allowed only for 127.0.0.1 or [::1] (RFC 8252 §7.3): \(uri)")
            }
            // The form RedirectURIMatcher matches at request time: a port, if
            // any, 1 to 65535 without a leading zero; no user info.
            guard RedirectURIMatcher.loopbackParts(uri) != nil else {
                throw ValidationError("loopback redirect URI needs http://127.0.0.1 or http://[::1], an optional port 1-65535, then a path: \(uri)")
            }
        default:
            // RFC 8252 §7.1: a private-use URI scheme, e.g. com.example.app:/cb.
            break
        }
    }

    /// The parameters an authorization response adds (RFC 6749 §4.1.2 and
    /// §4.1.2.1, RFC 9207 §2).
    static let responseParameterNames: Set<String> = ["code", "state", "iss", "error", "error_description", "error_uri"]

    static func isLoopbackHost(_ host: String?) -> Bool {
        host == "127.0.0.1" || host == "[::1]" || host == "::1"
    }
}
