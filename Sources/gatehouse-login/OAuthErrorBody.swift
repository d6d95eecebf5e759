import OutboundHTTPS
import SSOCore

/// An error reply (RFC 6749 §5.2, RFC 6750 §3 bodies share the shape).
struct OAuthErrorBody: Decodable {
    let error: String
    let errorDescription: String?

    enum CodingKeys: String, CodingKey {
        case error
        case errorDescription = "error_description"
    }

    /// "invalid_grant: the refresh token is spent", or the bare status.
    static func summary(of reply: HTTPSResponse) -> String {
        guard let body = try? reply.decode(OAuthErrorBody.self, what: "") else { return "HTTP \(reply.status)" }
        return body.error + (body.errorDescription.map { ": \($0)" } ?? "") + " (HTTP \(reply.status))"
    }
}
