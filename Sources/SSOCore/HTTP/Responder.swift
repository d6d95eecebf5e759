/// What every endpoint is: one method from request to response, callable
/// in-process by tests without nginx or sockets.
public protocol Responder {
    func respond(to request: Request) throws -> Response
}

/// An error that knows its own HTTP response (an OAuth error, a bearer
/// error, a busy database). Any other error becomes a logged 500 with no
/// detail on the wire.
public protocol HTTPResponseError: Error {
    var response: Response { get }
    /// What the log line says about it (never a secret).
    var logDetail: String { get }
}

extension FormError: HTTPResponseError {
    public var response: Response {
        switch code {
        case .tooLarge: .plainError(413, "request_too_large")
        case .unsupportedMediaType: .plainError(415, "unsupported_media_type")
        case .tooManyParameters, .badEncoding, .repeatedParameter, .controlCharacter: .plainError(400, "invalid_request")
        }
    }
    public var logDetail: String { description }
}

/// Turns whatever a responder did into the response to send and the detail
/// to log. One place, so every endpoint fails the same way.
public enum ResponderOutcome {
    public static func run(_ responder: Responder, _ request: Request) -> (Response, String?) {
        do {
            let response = try responder.respond(to: request)
            return (response, response.logDetail)
        } catch let error as HTTPResponseError {
            return (error.response, error.logDetail)
        } catch {
            return (.plainError(500, "server_error"), "unhandled: \(error)")
        }
    }
}
