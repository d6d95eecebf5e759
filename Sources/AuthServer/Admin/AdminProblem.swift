import IssuerStorage
import SSOCore

/// An admin API refusal as RFC 9457 writes it: `application/problem+json`
/// with `type`, `title`, `status` and `detail` (§3.1), plus `member` when
/// one member of the body is at fault. `type` is `about:blank` when the
/// status says it all (§4.2.1); otherwise one of the URNs below, which
/// docs/ADMIN-API.md lists.
public struct AdminProblem: Error, Equatable {
    public enum Kind: String, Sendable {
        case malformedBody = "malformed-body"
        case unknownMember = "unknown-member"
        case wrongType = "wrong-type"
        case invalidValue = "invalid-value"
        case invalidQuery = "invalid-query"
        case conflict
    }

    public let status: Int
    /// nil: `about:blank`.
    public let kind: Kind?
    public let title: String
    /// Client-safe, and safe to log (it names members and values the
    /// caller sent, never a secret: bodies' secret members are never quoted).
    public let detail: String
    public var member: String?
    public var headers: [(name: String, value: String)] = []

    public init(_ status: Int, _ kind: Kind?, _ title: String, _ detail: String, member: String? = nil) {
        self.status = status
        self.kind = kind
        self.title = title
        self.detail = detail
        self.member = member
    }

    public static func == (lhs: AdminProblem, rhs: AdminProblem) -> Bool {
        (lhs.status, lhs.kind, lhs.title, lhs.detail, lhs.member) == (rhs.status, rhs.kind, rhs.title, rhs.detail, rhs.member)
    }

    public var type: String { kind.map { "urn:gatehouse:admin:" + $0.rawValue } ?? "about:blank" }

    static func malformed(_ detail: String) -> AdminProblem { AdminProblem(400, .malformedBody, "Malformed body", detail) }
    static func unknownMember(_ name: String) -> AdminProblem {
        AdminProblem(400, .unknownMember, "Unknown member", "the body has a member this operation does not know: \(name.debugDescription)",
                     member: name)
    }
    static func readOnlyMember(_ name: String) -> AdminProblem {
        AdminProblem(400, .unknownMember, "Unknown member", "\(name.debugDescription) cannot be set by this operation", member: name)
    }
    static func wrongType(_ name: String, expected: String) -> AdminProblem {
        AdminProblem(400, .wrongType, "Wrong type", "\(name.debugDescription) must be \(expected)", member: name)
    }
    static func invalidQuery(_ detail: String) -> AdminProblem { AdminProblem(400, .invalidQuery, "Invalid query", detail) }
    static func notFound(_ detail: String) -> AdminProblem { AdminProblem(404, nil, "Not Found", detail) }
    /// "no user …" for an id from the path, quoted and cut to 64 bytes: a
    /// caller's 6 KB id is not worth echoing into answers and logs.
    static func noSuch(_ what: String, _ id: String) -> AdminProblem {
        let shown = id.utf8.count <= 64 ? id.debugDescription : String(decoding: id.utf8.prefix(64), as: UTF8.self).debugDescription + "…"
        return notFound("no \(what) \(shown)")
    }
    static func preconditionFailed() -> AdminProblem {
        AdminProblem(412, nil, "Precondition Failed", "If-Match names a version that is not the current one: GET it again")
    }

    /// The rules' own refusal, in their words (the ones `ssoctl` prints).
    static func refused(_ error: ValidationError) -> AdminProblem {
        switch error.kind {
        case .invalid: AdminProblem(400, .invalidValue, "Invalid value", error.description)
        case .notFound: notFound(error.description)
        case .conflict: AdminProblem(409, .conflict, "Conflict", error.description)
        }
    }

    var response: Response {
        struct Body: Encodable {
            let type: String
            let title: String
            let status: Int
            let detail: String
            let member: String?
        }
        let body = (try? JSON.encode(Body(type: type, title: title, status: status, detail: detail, member: member))) ?? []
        return Response(status: status, headers: [("Content-Type", "application/problem+json")] + headers, body: body)
            .logging("admin API refused (\(status)): \(detail)")
    }
}

/// The admin API's error dialect: every refusal as a problem document.
/// A bearer refusal keeps its `WWW-Authenticate` challenge (RFC 6750 §3)
/// with the problem as its body; a rule's ValidationError gets the status
/// its kind names; a malformed query is `invalid-query`.
struct AdminProblems: ErrorDialect {
    let realm: String

    func response(for error: any Error, _ exchange: EndpointExchange) throws -> Response? {
        switch error {
        case let problem as AdminProblem: return problem.response
        case var bearer as IssuerBearerError:
            bearer.realm = realm
            let title = [400: "Bad Request", 403: "Forbidden"][bearer.status] ?? "Unauthorized"
            var problem = AdminProblem(bearer.status, nil, title, bearer.description)
            problem.headers = [("WWW-Authenticate", bearer.challenge)]
            return problem.response.logging("admin API: \(bearer.code.rawValue): \(bearer.detail.isEmpty ? bearer.description : bearer.detail)")
        case let refusal as ValidationError: return AdminProblem.refused(refusal).response
        // The rules' other refusals: a password the policy refuses, an
        // address that is not one (the invitation's mail).
        case let refusal as PasswordRefusal: return AdminProblem(400, .invalidValue, "Invalid value", refusal.description, member: "password").response
        case let refusal as MailMessageError: return AdminProblem(400, .invalidValue, "Invalid value", "\(refusal)", member: "email").response
        case let form as FormError where form.code == .tooLarge:
            return AdminProblem(413, nil, "Content Too Large", "the body is over \(AdminBody.maximumSize) bytes").response
        case let form as FormError: return AdminProblem.invalidQuery("the query does not read: \(form.code.rawValue)").response
        // Any other error that knows its answer (a database out of reach:
        // 503 with Retry-After) keeps its status and headers, as a problem.
        case let known as HTTPResponseError:
            let answer = known.response
            var problem = AdminProblem(answer.status, nil, Self.title(answer.status), "the request could not be served now; retry later")
            problem.headers = answer.headers.filter { $0.name.lowercased() == "retry-after" }
            return problem.response.logging(known.logDetail)
        default: return nil
        }
    }

    static func title(_ status: Int) -> String {
        switch status {
        case 413: "Content Too Large"
        case 429: "Too Many Requests"
        case 503: "Service Unavailable"
        default: status < 500 ? "Bad Request" : "Server Error"
        }
    }

    func methodNotAllowed(allowed: [String]) -> Response {
        var problem = AdminProblem(405, nil, "Method Not Allowed", "this resource answers \(allowed.joined(separator: ", "))")
        problem.headers = [("Allow", allowed.joined(separator: ", "))]
        return problem.response
    }
}
