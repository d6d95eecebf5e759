import IssuerStorage
import SSOCore

/// `/account`'s "Sessions and devices": each live session of the user (when
/// and how it signed in, the apps holding its refresh tokens or device
/// secrets, where it came from, and which one is this browser), each with
/// a plain form that signs it out, and "Sign out everywhere". No script:
/// the forms post to AccountSessionsResponder and come back to the page.
/// Everything stored (the User-Agent, the address, client ids) is
/// HTML-escaped.
enum AccountSessionsSection {
    /// `sessions` as `SSOSessions.liveListings` returns them (newest first);
    /// `currentSID`: the session of the browser asking, listed first.
    static func render(sessions: [SSOSessionListing], currentSID: String, formToken: String) -> String {
        let escape = HTMLEscaping.escape
        let ordered = sessions.filter { $0.sid.bytesEqual(currentSID) } + sessions.filter { !$0.sid.bytesEqual(currentSID) }
        let rows = ordered.map { session in
            let current = session.sid.bytesEqual(currentSID)
            let apps = session.clientIDs ?? []
            let place = session.createdIP.map { " · from <span class=\"session-address\">\(escape($0))</span>" } ?? ""
            return """
                <li class="session\(current ? " session-this" : "")">
                  <div><strong class="session-browser">\(escape(browser(session.userAgent)))</strong>\
            \(current ? " <span class=\"session-current\">this browser</span>" : "")
                  <span class="small">Signed in \(AccountPage.date(session.authTime)) · \
            <span class="session-method">\(escape(method(session.amr)))</span>\(place)</span>
                  <span class="small session-apps">\(apps.isEmpty ? "No apps" : "Apps: " + apps.map(escape).joined(separator: ", "))</span></div>
                  <form method="post" action="\(AccountSessionsResponder.endPath)" class="inline">
                    \(AccountPage.tokenField(formToken))
                    <input type="hidden" name="sid" value="\(escape(session.sid))">
                    <button type="submit" class="secondary">Sign out</button>
                  </form>
                </li>
            """
        }.joined(separator: "\n")
        return """
              <h2 id="sessions-heading">Sessions and devices</h2>
              <p class="small">Where you are signed in. Signing out a session also signs out the apps that use it.</p>
              <ul class="sessions" id="sessions" aria-labelledby="sessions-heading">
            \(rows)
              </ul>
              <form method="post" action="\(AccountSessionsResponder.endAllPath)">
                \(AccountPage.tokenField(formToken))
                <button type="submit" class="secondary" id="sign-out-everywhere">Sign out everywhere</button>
              </form>
            """
    }

    /// How the session signed in (its amr, RFC 8176).
    static func method(_ amr: [String]) -> String {
        let values = Set(amr)
        if values.contains(AuthenticationMethods.password) {
            return values.contains(AuthenticationMethods.oneTimePassword) ? "password + code" : "password"
        }
        if !values.isDisjoint(with: [AuthenticationMethods.hardwareKey, AuthenticationMethods.softwareKey]) { return "passkey" }
        return amr.joined(separator: " + ")
    }

    /// The longest User-Agent shown as it is, when no browser is recognised in it.
    static let rawAgentLimit = 64

    /// A short description of the browser from its User-Agent ("Firefox on
    /// Linux", "Safari on iPhone"); an unrecognised one is shown as it is,
    /// cut to `rawAgentLimit` characters.
    static func browser(_ userAgent: String?) -> String {
        guard let agent = userAgent, !agent.isEmpty else { return "Unknown browser" }
        func has(_ token: String) -> Bool { agent.contains(token) }
        // Order matters: Edge, Opera and Samsung Internet also say Chrome and
        // Safari; Chrome says Safari; every iOS browser is WebKit.
        let name: String? =
            has("Edg/") || has("EdgiOS/") || has("EdgA/") ? "Edge"
            : has("OPR/") || has("Opera") ? "Opera"
            : has("SamsungBrowser/") ? "Samsung Internet"
            : has("Firefox/") || has("FxiOS/") ? "Firefox"
            : has("CriOS/") || has("Chrome/") || has("Chromium/") ? "Chrome"
            : has("Safari/") && has("Version/") ? "Safari"
            : nil
        let system: String? =
            has("iPhone") ? "iPhone"
            : has("iPad") ? "iPad"
            : has("Android") ? "Android"
            : has("Windows") ? "Windows"
            : has("CrOS") ? "ChromeOS"
            : has("Macintosh") || has("Mac OS X") ? "macOS"
            : has("Linux") ? "Linux"
            : nil
        guard let name else {
            return agent.count > rawAgentLimit ? String(agent.prefix(rawAgentLimit - 1)) + "…" : agent
        }
        return system.map { "\(name) on \($0)" } ?? name
    }
}
