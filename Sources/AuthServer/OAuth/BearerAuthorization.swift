import IssuerStorage
import SSOCore

/// The access token a request to one of the issuer's own protected
/// resources (userinfo) presents, per RFC 6750 §2.
///
/// The Authorization header (§2.1) and, for POST, the form body (§2.2) are
/// read; the query string (§2.3) is refused, because URLs end up in logs,
/// histories and Referer headers (RFC 6750 §5.3: "Don't pass bearer tokens
/// in page URLs").
public enum BearerAuthorization {
    public enum Outcome: Equatable, Sendable {
        /// No credentials at all, or another authentication scheme.
        case absent
        case token(String)
        /// RFC 9449 §7.1: `Authorization: DPoP <token>`, with a DPoP proof.
        case dpop(String)
    }

    /// The token, `.absent`, or a thrown `IssuerBearerError`.
    public static func extract(from request: Request) throws -> Outcome {
        let header = try fromHeader(request.header("authorization"))
        let query = try? request.queryParameters()
        // RFC 6750 §2.3 is not offered: a token in the URL is refused loudly
        // rather than ignored, so the client learns why it is not accepted.
        if let query, !query.values("access_token").isEmpty {
            throw IssuerBearerError(.invalidRequest, "access tokens are not accepted in the query string; use the Authorization header")
        }
        var body: String?
        if request.method == "POST", !request.body.isEmpty {
            body = try fromFormBody(request)
        }
        // RFC 6750 §2: "Clients MUST NOT use more than one method to transmit
        // the token in each request."
        switch (header, body) {
        case (.dpop(let token), nil):
            return .dpop(token)
        case (.token, .some), (.dpop, .some):
            throw IssuerBearerError(.invalidRequest, "the access token was sent both in the Authorization header and in the body")
        case (.token(let token), nil):
            return .token(token)
        case (.absent, .some(let token)):
            return .token(token)
        case (.absent, nil):
            return .absent
        }
    }

    /// RFC 6750 §2.1: credentials = "Bearer" 1*SP b64token. RFC 9110 §11.1:
    /// the scheme is case-insensitive. Another scheme is "an unsupported
    /// authentication method" (RFC 6750 §3.1): no credentials for us.
    static func fromHeader(_ header: String?) throws -> Outcome {
        guard let header, !header.allSatisfy({ $0 == " " || $0 == "\t" }) else { return .absent }
        let scheme = header.prefix { $0 != " " }
        // RFC 9449 §7.1: DPoP = "DPoP" 1*SP token68, the same syntax.
        let isDPoP = scheme.lowercased() == "dpop"
        guard scheme.lowercased() == "bearer" || isDPoP else { return .absent }
        let token = header.dropFirst(scheme.count).drop { $0 == " " }
        guard !token.isEmpty else {
            throw IssuerBearerError(.invalidRequest, "the \(isDPoP ? "DPoP" : "Bearer") scheme needs a token", scheme: isDPoP ? .dpop : .bearer)
        }
        guard BearerSyntax.isB64Token(token.utf8) else {
            throw IssuerBearerError(.invalidToken, "the access token has characters outside the b64token syntax",
                                    scheme: isDPoP ? .dpop : .bearer)
        }
        return isDPoP ? .dpop(String(token)) : .token(String(token))
    }

    /// RFC 6750 §2.2: "The HTTP request entity-body is single-part" and
    /// "The entity-body follows the encoding requirements of the
    /// application/x-www-form-urlencoded content-type".
    static func fromFormBody(_ request: Request) throws -> String? {
        let form: FormParameters
        do { form = try request.formParameters() } catch let error as FormError {
            // Not a form: §2.2 does not apply, and nothing else is read from
            // a userinfo body, so the body is simply not a token carrier.
            if error.code == .unsupportedMediaType { return nil }
            throw IssuerBearerError(.invalidRequest, error.code == .repeatedParameter
                                    ? "parameter \(error.detail) is repeated" : "the body is not valid form encoding")
        }
        let value: String?
        do { value = try form.single("access_token") } catch {
            throw IssuerBearerError(.invalidRequest, "parameter access_token is repeated")
        }
        guard let token = value else { return nil }
        guard BearerSyntax.isB64Token(Substring(token).utf8) else {
            throw IssuerBearerError(.invalidToken, "the access token has characters outside the b64token syntax")
        }
        return token
    }

}
