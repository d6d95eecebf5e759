import OutboundHTTPS
import SSOCore

/// An error reply (RFC 6749 §5.2, RFC 6750 §3 bodies share the shape).
struct OAuthErrorBody: Decodable {
    let error: String
    let errorDescription: String?
    /// Gatehouse's `reason` beside a refused refresh (session_ended,
    /// password_changed, ...).
    let reason: String?

    enum CodingKeys: String, CodingKey {
        case error
        case errorDescription = "error_description"
        case reason
    }

    /// "invalid_grant: the refresh token is spent", or the bare status.
    static func summary(of reply: HTTPSResponse) -> String {
        guard let body = try? reply.decode(OAuthErrorBody.self, what: "") else { return "HTTP \(reply.status)" }
        return body.error + (body.errorDescription.map { ": \($0)" } ?? "") + " (HTTP \(reply.status))"
            + (body.reason.flatMap(Self.explanation).map { "\n" + $0 } ?? "")
    }

    /// What the user is told for each reason (docs/API.md's table); an
    /// unknown one is shown as it is, printable ASCII only (it comes from
    /// the network and goes to a terminal).
    static func explanation(of reason: String) -> String? {
        switch reason {
        case "session_ended": "You were signed out (here, on another device, or by an administrator)."
        case "refresh_token_expired": "Your sign-in has expired."
        case "refresh_token_reused": "This sign-in was used from somewhere else, so it was ended to protect your account."
        case "password_changed": "Your password was changed, so every sign-in ended."
        case "user_disabled": "Your account has been disabled; ask your administrator."
        case "client_changed": "This app's registration changed."
        default:
            reason.utf8.count <= 64 && reason.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) ? "Reason: \(reason)." : nil
        }
    }
}
