import SSOCore

/// One endpoint, declared as a row of its process's route table
/// (IssuerRouteTable): its path, the methods it answers, where its input
/// comes from, the guards a request passes in order, how a refusal is
/// written (its error dialect), how caches may keep its answers, and the
/// handler that does its one job. EndpointResponder runs the rest, the same
/// way for every endpoint, as Hummingbird's router and node-oidc-provider's
/// action chains do; the handler sees a request that has passed them all.
public struct Endpoint {
    public let path: String
    public let methods: EndpointMethods
    public let input: EndpointInput
    let guards: [any EndpointGuard]
    let errors: any ErrorDialect
    let cache: CachePolicy
    /// Among rows of one path, the row for requests whose input carries
    /// this field (the sign-in's code step posts `otp` to `/login`); nil:
    /// the path's row for every other request. Rows of one path share
    /// methods, input, guards, dialect and cache policy (RouteTable checks).
    let selector: String?
    let handler: (EndpointExchange) throws -> Response

    public init(_ path: String, _ methods: EndpointMethods, input: EndpointInput = .none, guards: [any EndpointGuard] = [],
                errors: any ErrorDialect = PlainErrors(), cache: CachePolicy, when selector: String? = nil,
                handler: @escaping (EndpointExchange) throws -> Response) {
        self.path = path
        self.methods = methods
        self.input = input
        self.guards = guards
        self.errors = errors
        self.cache = cache
        self.selector = selector
        self.handler = handler
    }

    /// What the table says about this row, for comparing rows of one path.
    var prologue: String {
        "\(methods.names) \(input) \(guards.map { String(describing: type(of: $0)) }) \(type(of: errors)) \(cache)"
    }
}

/// The methods an endpoint answers; any other gets 405 with `Allow`
/// (RFC 9110 §15.5.6).
public struct EndpointMethods: Sendable, Equatable {
    public let names: [String]

    /// RFC 9110 §9.3.2: HEAD is GET without the body, for every resource
    /// that is safe to read (documents, pages, metrics).
    public static let read = EndpointMethods(names: ["GET", "HEAD"])
    /// A GET that changes state (a code redeemed, a sign-in started): it
    /// is not safe (RFC 9110 §9.2.1), so HEAD, which any crawler or link
    /// checker may send, is not answered as a GET.
    public static let get = EndpointMethods(names: ["GET"])
    public static let post = EndpointMethods(names: ["POST"])
    /// OIDC's endpoints that take both (authorize, userinfo, logout).
    public static let getAndPost = EndpointMethods(names: ["GET", "POST"])

    func allows(_ method: String) -> Bool { names.contains(method) }
}

/// Where an endpoint's parameters come from.
public enum EndpointInput: Sendable {
    /// Nothing is parsed.
    case none
    /// The query string.
    case query
    /// An `application/x-www-form-urlencoded` body (anything else: 415).
    case form
    /// The body of a POST, the query of a GET (OIDC Core §3.1.2.1,
    /// RP-Initiated Logout §2: both methods, the same parameters).
    case formOrQuery
}

/// How caches may keep an endpoint's answers, applied to every answer,
/// refusals included.
public enum CachePolicy: Sendable {
    /// `Cache-Control: no-store`: answers about one user or one request.
    case noStore
    /// RFC 6749 §5.1: "The authorization server MUST include the HTTP
    /// "Cache-Control" response header field with a value of "no-store"
    /// in any response containing tokens, credentials, or other sensitive
    /// information, as well as the "Pragma" response header field with a
    /// value of "no-cache"."
    case credentials
    /// The handler says (the JWKS and discovery are public and cacheable).
    case asAnswered

    func apply(to response: inout Response) {
        switch self {
        case .asAnswered: return
        case .noStore: Self.addIfMissing(&response, "Cache-Control", "no-store")
        case .credentials:
            Self.addIfMissing(&response, "Cache-Control", "no-store")
            Self.addIfMissing(&response, "Pragma", "no-cache")
        }
    }

    static func addIfMissing(_ response: inout Response, _ name: String, _ value: String) {
        if response.header(name) == nil { response.headers.append((name, value)) }
    }
}
