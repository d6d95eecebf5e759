import SSOCore

/// What the interstitial page (`/mobile/postlogin.html`, a static page
/// nginx completes with SSI) needs to know of the sign-in before it: the
/// page waits for a tap partly so a password manager can offer to save the
/// password, which it says only after a password was typed. A short-lived
/// cookie scoped to that page carries "password"; every other sign-in (a
/// passkey) deletes it, and a page reached without a sign-in (a live SSO
/// session) finds none once it has expired.
enum InterstitialSignInMethod {
    static let cookieName = "gh_signin"
    static let pagePath = "/mobile/postlogin.html"
    /// Long enough to reach the page from the sign-in, no longer.
    static let lifetime = 120

    static func cookie(after amr: [String]) -> SetCookie {
        guard amr.contains(AuthenticationMethods.password) else { return .expired(name: cookieName, path: pagePath) }
        return SetCookie(name: cookieName, value: "password", path: pagePath, maxAge: lifetime)
    }
}
