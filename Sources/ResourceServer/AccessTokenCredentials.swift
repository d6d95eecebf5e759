import SSOCore

/// The access token of an `Authorization` header under either scheme a
/// resource server accepts: `Bearer` (RFC 6750 §2.1) or `DPoP` (RFC 9449 §7.1).
///
/// Only the header is read: the form-body and query-string methods of
/// RFC 6750 §2.2/§2.3 are not offered (the query one leaks tokens into logs).
public enum AccessTokenCredentials {
    public enum Scheme: String, Sendable {
        case bearer = "Bearer"
        case dpop = "DPoP"
    }

    public enum Outcome: Equatable, Sendable {
        /// No Authorization header, an empty one, or another scheme.
        case absent
        /// A supported scheme with no token or a token of forbidden characters.
        case malformed(Scheme, String)
        case token(Scheme, String)
    }

    /// `isVerified` names a token text that already passed every check,
    /// the syntax included (the resource server's verified-token cache):
    /// the byte-by-byte syntax scan is skipped for it, since the same bytes
    /// passed it before.
    public static func extract(fromAuthorization header: String?, isVerified: (String) -> Bool = { _ in false }) -> Outcome {
        guard let header, !header.allSatisfy({ $0 == " " || $0 == "\t" }) else { return .absent }
        let name = header.prefix { $0 != " " }
        // RFC 9110 §11.1: "It uses a case-insensitive token to identify the
        // authentication scheme". RFC 6750 §3.1: a request "attempted using an
        // unsupported authentication method" lacks authentication information.
        let scheme: Scheme
        switch name.lowercased() {
        case "bearer": scheme = .bearer
        case "dpop": scheme = .dpop
        default: return .absent
        }
        // RFC 6750 §2.1: credentials = "Bearer" 1*SP b64token
        // RFC 9449 §7.1: credentials = "DPoP" 1*SP token68 (the same characters)
        let token = header.dropFirst(name.count).drop { $0 == " " }
        guard !token.isEmpty else { return .malformed(scheme, "\(scheme.rawValue) scheme without a token") }
        let text = String(token)
        guard isVerified(text) || BearerSyntax.isB64Token(token.utf8) else {
            return .malformed(scheme, "token has characters outside \(scheme == .bearer ? "b64token" : "token68")")
        }
        return .token(scheme, text)
    }
}
