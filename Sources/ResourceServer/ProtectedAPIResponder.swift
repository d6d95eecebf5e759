import FoundationEssentials
import Glibc
import SSOCore

/// One protected GET endpoint of a resource server: the method and path
/// checks, bearer validation, then the endpoint's own handler with the
/// verified claims. Every answer, success or error, is `no-store`.
public final class ProtectedAPIResponder: Responder {
    public typealias Handler = (AccessTokenClaims) throws -> Response

    public let path: String
    let validator: AccessTokenValidator
    let handler: Handler
    /// Seconds since 1970; injectable so tests can move time.
    let clock: () -> Int

    public init(path: String, validator: AccessTokenValidator, clock: @escaping () -> Int = { Int(time(nil)) },
                handler: @escaping Handler) {
        self.path = path
        self.validator = validator
        self.clock = clock
        self.handler = handler
    }

    public func respond(to request: Request) throws -> Response {
        guard request.path == path else { return .plainError(404, "not_found") }
        guard request.method == "GET" else { return .methodNotAllowed(allowed: ["GET"]) }
        let claims = try validator.validate(authorization: request.header("authorization"), now: clock())
        var response = try handler(claims)
        response.setHeader("Cache-Control", "no-store")
        return response
    }
}
