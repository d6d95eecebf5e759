import IssuerStorage
import SSOCore

/// `/account`'s "Sessions and devices": each live session of the user (when
/// and how it signed in, the apps holding its refresh tokens or device
/// secrets, where it came from, and which one is this browser), each with
/// a plain form that signs it out, and "Sign out everywhere". No script:
/// the forms post to AccountSessionsResponder and come back to the page.
/// Everything stored (the User-Agent, the address, the apps' names) is
/// HTML-escaped.
enum AccountSessionsSection {
    /// `sessions` as `SSOSessions.liveListings` returns them (newest first);
    /// `currentSID`: the session of the browser asking, listed first;
    /// `appName`: what to call an app (its display name, else its id).
    static func render(sessions: [SSOSessionListing], currentSID: String, formToken: String, messages: Messages,
                       appName: (String) -> String = { $0 }) -> String {
        let escape = HTMLEscaping.escape
        let ordered = sessions.filter { $0.sid.bytesEqual(currentSID) } + sessions.filter { !$0.sid.bytesEqual(currentSID) }
        let rows = ordered.map { session in
            let current = session.sid.bytesEqual(currentSID)
            let apps = (session.clientIDs ?? []).map(appName)
            let place = session.createdIP.map {
                " · " + messages.html("sessions.from", ["address": "<span class=\"session-address\">\(escape($0))</span>"])
            } ?? ""
            let appList = apps.isEmpty ? messages.html("sessions.no_apps")
                : messages.html("sessions.apps", ["apps": apps.map(escape).joined(separator: ", ")])
            return """
                <li class="session\(current ? " session-this" : "")">
                  <div><strong class="session-browser">\(escape(browser(session.userAgent, messages)))</strong>\
            \(current ? " <span class=\"session-current\">\(messages.html("sessions.this_browser"))</span>" : "")
                  <span class="small">\(messages.html("sessions.signed_in", ["date": AccountPage.date(session.authTime)])) · \
            <span class="session-method">\(escape(method(session.amr, messages)))</span>\(place)</span>
                  <span class="small session-apps">\(appList)</span></div>
                  <form method="post" action="\(AccountSessionsResponder.endPath)" class="inline">
                    \(AccountPage.tokenField(formToken))
                    <input type="hidden" name="sid" value="\(escape(session.sid))">
                    <button type="submit" class="secondary">\(messages.html("sessions.sign_out"))</button>
                  </form>
                </li>
            """
        }.joined(separator: "\n")
        return """
              <h2 id="sessions-heading">\(messages.html("sessions.heading"))</h2>
              <p class="small">\(messages.html("sessions.lead"))</p>
              <ul class="sessions" id="sessions" aria-labelledby="sessions-heading">
            \(rows)
              </ul>
              <form method="post" action="\(AccountSessionsResponder.endAllPath)">
                \(AccountPage.tokenField(formToken))
                <button type="submit" class="secondary" id="sign-out-everywhere">\(messages.html("sessions.sign_out_everywhere"))</button>
              </form>
            """
    }

    /// How the session signed in (its amr, RFC 8176), as plain text.
    static func method(_ amr: [String], _ messages: Messages) -> String {
        if let provider = AuthenticationMethods.identityProvider(in: amr) { return messages.text("sessions.method_provider", ["provider": provider]) }
        let values = Set(amr)
        if values.contains(AuthenticationMethods.password) {
            let withCode = values.contains(AuthenticationMethods.oneTimePassword)
            return messages.text(withCode ? "sessions.method_password_code" : "sessions.method_password")
        }
        if !values.isDisjoint(with: [AuthenticationMethods.hardwareKey, AuthenticationMethods.softwareKey]) {
            return messages.text("sessions.method_passkey")
        }
        return amr.joined(separator: " + ")
    }

    /// The longest User-Agent shown as it is, when no browser is recognised in it.
    static let rawAgentLimit = 64

    /// A short description of the browser from its User-Agent ("Firefox on
    /// Linux", "Safari on iPhone"), as plain text; an unrecognised one is
    /// shown as it is, cut to `rawAgentLimit` characters. The browsers' and
    /// systems' names are names: the same in every language.
    static func browser(_ userAgent: String?, _ messages: Messages) -> String {
        guard let agent = userAgent, !agent.isEmpty else { return messages.text("sessions.unknown_browser") }
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
        return system.map { messages.text("sessions.browser_on", ["browser": name, "system": $0]) } ?? name
    }
}
