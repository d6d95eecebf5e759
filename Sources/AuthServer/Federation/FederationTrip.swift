import SSOCore

/// The random values of one browser's trip to a provider, and what is
/// derived from them. `state` travels through the provider; the binding
/// stays in this browser's `gh_federation` cookie, beside the pending
/// request's form token (needed to lead back to the login page). The
/// database holds only their SHA-256 hashes; the PKCE verifier and the
/// nonce are hashes of both under their own labels, so neither is stored
/// and neither can be made without the cookie.
public struct FederationTrip: Sendable {
    public static let cookieName = "gh_federation"
    /// Ten minutes at the provider, as long as a pending request lives.
    public static let lifetime: Int64 = 600
    /// The cookie's path: only the callback reads it.
    public static let cookiePath = "/federation"

    public let state: String
    public let binding: String
    public let formToken: String

    public static func start(formToken: String) -> FederationTrip {
        FederationTrip(state: SecureRandom.token(), binding: SecureRandom.token(), formToken: formToken)
    }

    /// RFC 7636 §4.1: 43 characters of base64url, 256 bits.
    public var codeVerifier: String { Self.derive("pkce", binding, state) }
    public var codeChallenge: String { PKCE.s256Challenge(verifier: codeVerifier) }
    /// OIDC Core §15.5.2: a nonce bound to this browser, as the binding is.
    public var nonce: String { Self.derive("nonce", binding, state) }

    static func derive(_ label: String, _ binding: String, _ state: String) -> String {
        Base64URL.encode(SHA256.hash(Array("gatehouse-federation \(label)\u{0}\(binding)\u{0}\(state)".utf8)))
    }

    /// SameSite=None: Apple's form_post comes back as a cross-site POST,
    /// which carries no Lax cookie; the value is useless without the
    /// state, which only the provider's answer carries.
    public var cookie: SetCookie {
        SetCookie(name: Self.cookieName, value: binding + "." + formToken, path: Self.cookiePath, maxAge: Int(Self.lifetime), sameSite: .none)
    }

    public static var expiredCookie: SetCookie {
        var cookie = SetCookie.expired(name: cookieName, path: cookiePath)
        cookie.sameSite = .none
        return cookie
    }

    /// A state this issuer could have made: base64url, 16 to 128 bytes.
    public static func isWellFormed(state: String) -> Bool {
        (16...128).contains(state.utf8.count) && Base64URL.decode(state) != nil
    }

    /// The trip a callback's `state` and this browser's cookie describe;
    /// nil when either is missing or malformed.
    public static func returning(state: String?, cookie: String?) -> FederationTrip? {
        guard let state, isWellFormed(state: state), let cookie, cookie.utf8.count <= 300 else { return nil }
        let parts = cookie.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else { return nil }
        return FederationTrip(state: state, binding: String(parts[0]), formToken: String(parts[1]))
    }
}
