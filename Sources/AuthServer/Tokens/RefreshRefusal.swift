import IssuerStorage

/// Why a refresh was refused, as the token endpoint's `reason` member says
/// it beside `invalid_grant`, so an app can act: sign in again silently,
/// tell the user why, or stop (docs/API.md, "When a refresh is refused").
public enum RefreshRefusal: String, Sendable, Equatable {
    /// Signed out (here, elsewhere, by an administrator), or the sign-in
    /// session reached its end.
    case sessionEnded = "session_ended"
    /// The refresh token reached its end (or is unknown: an expired token
    /// is swept and then no longer known).
    case refreshTokenExpired = "refresh_token_expired"
    /// A spent refresh token came back: the session ended (RFC 9700 §4.14.2).
    case refreshTokenReused = "refresh_token_reused"
    case passwordChanged = "password_changed"
    case userDisabled = "user_disabled"
    /// The client's registration no longer fits the token (it was issued to
    /// another client id, or the client may no longer refresh).
    case clientChanged = "client_changed"

    /// The refusal a session's end gives its refresh tokens: why it ended,
    /// else a disabled account, else the session's own end.
    public static func of(_ session: SSOSessionListing?) -> RefreshRefusal {
        if let reason = session?.endedReason, let refusal = RefreshRefusal(rawValue: reason.rawValue) { return refusal }
        return session?.state == .userDisabled ? .userDisabled : .sessionEnded
    }
}
