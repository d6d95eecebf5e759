import SSOCore

/// The access token of an `Authorization: Bearer` header (RFC 6750 §2.1).
///
/// Only the header is read: the form-body and query-string methods of
/// RFC 6750 §2.2/§2.3 are not offered (the query one leaks tokens into logs).
public enum BearerCredentials {
    public enum Outcome: Equatable, Sendable {
        /// No Authorization header, an empty one, or another scheme.
        case absent
        /// The Bearer scheme with no token or a token of forbidden characters.
        case malformed(String)
        case token(String)
    }

    public static func extract(fromAuthorization header: String?) -> Outcome {
        guard let header, !header.allSatisfy({ $0 == " " || $0 == "\t" }) else { return .absent }
        let scheme = header.prefix { $0 != " " }
        // RFC 9110 §11.1: "It uses a case-insensitive token to identify the
        // authentication scheme". RFC 6750 §3.1: a request "attempted using an
        // unsupported authentication method" lacks authentication information.
        guard scheme.lowercased() == "bearer" else { return .absent }
        // RFC 6750 §2.1: credentials = "Bearer" 1*SP b64token
        let token = header.dropFirst(scheme.count).drop { $0 == " " }
        guard !token.isEmpty else { return .malformed("Bearer scheme without a token") }
        guard BearerSyntax.isB64Token(token.utf8) else { return .malformed("token has characters outside b64token") }
        return .token(String(token))
    }

}
