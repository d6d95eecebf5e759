import Foundation
import XCTest
@testable import AuthServer
import IssuerStorage
import SSOCore

/// The pages the responders build (account, sign-out, errors) come from the
/// message catalogues and nothing else, in the request's language: the
/// catalogues agree with each other and with the code, and each page picks
/// its language the way its request allows (ui_locales, a page's `lang`,
/// Accept-Language).
final class PageLanguageTests: SessionEndpointsTestCase {
    typealias Catalogues = PageCatalogues

    // MARK: The catalogues

    func table(_ language: String) throws -> [String: String] {
        try MessageCatalogue.readTable(path: Catalogues.repository + "/www/locales/\(language).json")
    }

    /// The keys of a catalogue file in the order the file has them.
    func keyOrder(_ language: String) throws -> [String] {
        let text = try String(contentsOfFile: Catalogues.repository + "/www/locales/\(language).json", encoding: .utf8)
        return text.split(separator: "\n").compactMap { line in
            let trimmed = line.drop { $0 == " " }
            guard trimmed.hasPrefix("\""), let end = trimmed.dropFirst().firstIndex(of: "\"") else { return nil }
            return String(trimmed[trimmed.index(after: trimmed.startIndex)..<end])
        }
    }

    static func placeholders(_ text: String) -> [String] {
        var names: [String] = []
        var rest = Substring(text)
        while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
            names.append(String(rest[rest.index(after: open)..<close]))
            rest = rest[rest.index(after: close)...]
        }
        return names.sorted()
    }

    func testEnglishAndGermanHaveTheSameKeysInTheSameOrderAndTheSamePlaceholders() throws {
        let english = try table("en"), german = try table("de")
        XCTAssertEqual(Set(english.keys).subtracting(german.keys).sorted(), [], "keys German lacks")
        XCTAssertEqual(Set(german.keys).subtracting(english.keys).sorted(), [], "keys only German has")
        XCTAssertEqual(try keyOrder("de"), try keyOrder("en"), "German keeps en.json's order")
        XCTAssertEqual(try keyOrder("en").count, english.count, "one key a line")
        for (key, text) in english {
            XCTAssertEqual(Self.placeholders(german[key] ?? ""), Self.placeholders(text), key)
            XCTAssertFalse((german[key] ?? "").trimmingASCIIWhitespace().isEmpty, key)
        }
        // Translated, except names and words both languages share.
        XCTAssertEqual(english.keys.filter { german[$0] == english[$0] }.sorted(),
                       ["error.details_parameter", "index.title", "otp.code", "passkeys.heading", "sessions.apps"])
    }

    func testTextsTheEndToEndTestsMatchStayAsTheyWere() {
        let english = Catalogues.english
        XCTAssertEqual(english.text("login.wrong_credentials"), "Wrong email or password.")
        XCTAssertEqual(english.text("logout.signed_out"), "You are signed out")
        XCTAssertEqual(english.text("passkeys.removed"), "The passkey was removed.")
        XCTAssertEqual(english.text("logout.confirm_title"), "Sign out?")
        XCTAssertEqual(english.text("error.signin_title"), "Sign-in error")
        XCTAssertEqual(english.text("account.title"), "Your account")
        XCTAssertEqual(english.text("logout.error_title"), "Sign-out error")
    }

    /// Every `"prefix.name"` literal in the issuer's Swift code names a text
    /// en.json has (a typo would show the key on a page).
    func testEveryKeyTheSwiftCodeNamesIsInTheEnglishCatalogue() throws {
        let english = Catalogues.tables["en"] ?? [:]
        let sources = Catalogues.repository + "/Sources/AuthServer"
        let pattern = try NSRegularExpression(pattern: "\"((?:account|sessions|totp|password|logout|error|passkeys|brand)\\.[a-z_]+)\"")
        var named: Set<String> = []
        let files = FileManager.default.enumerator(atPath: sources)
        while let path = files?.nextObject() as? String {
            guard path.hasSuffix(".swift") else { continue }
            let text = try String(contentsOfFile: sources + "/" + path, encoding: .utf8)
            for match in pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                named.insert((text as NSString).substring(with: match.range(at: 1)))
            }
        }
        XCTAssertGreaterThan(named.count, 100, "the scan finds the code's keys")
        XCTAssertEqual(named.filter { english[$0] == nil }.sorted(), [])
    }

    // MARK: Every page, built with the real catalogues

    static let keyPattern = try! NSRegularExpression(
        pattern: "(?<![\\w/.-])(?:account|sessions|totp|password|password_rule|logout|error|passkeys|brand|login|otp|getting_in|forgot|reset|signup|verify|unverified|invitation|mail|confirm|delete|email|email_change|email_revert|links)\\.[a-z_]+(?![\\w.-])")

    /// No text of the page is a key (a key the catalogue lacks shows as itself).
    func assertNoKey(_ html: String, _ what: String, file: StaticString = #filePath, line: UInt = #line) {
        let leaks = Self.keyPattern.matches(in: html, range: NSRange(html.startIndex..., in: html))
            .map { (html as NSString).substring(with: $0.range) }
        XCTAssertEqual(leaks, [], "\(what): \(html)", file: file, line: line)
    }

    static let alice = User(id: 1, subject: "sub-1", email: "alice@example.com", name: "Alice <Admin>", passwordHash: "x", roles: [],
                            disabled: false)

    /// Every page and fragment the account, sign-out and error code builds,
    /// in one language: each notice, each state of each section.
    func everyPage(_ messages: Messages) throws -> [(String, String)] {
        let now: Int64 = 1_764_162_300
        let passkeys = [
            PasskeyRecord(credentialID: [1, 2, 3], userID: 1, publicKeyCOSE: [], algorithm: -7, signCount: 0, name: "Phone", aaguid: [],
                          backupEligible: true, backupState: true, transports: [], createdAt: now - 86_400, lastUsedAt: now),
            PasskeyRecord(credentialID: [4, 5, 6], userID: 1, publicKeyCOSE: [], algorithm: -7, signCount: 0, name: "Key", aaguid: [],
                          backupEligible: false, backupState: false, transports: [], createdAt: now),
        ]
        let sessions = [
            SSOSessionListing(sid: "s1", userID: 1, email: "alice@example.com", authTime: now, createdAt: now, expiresAt: now + 60,
                              endedAt: nil, amr: ["pwd"], state: .active, createdIP: "203.0.113.7", userAgent: PageLanguageTests.firefox,
                              clientIDs: ["mobile-app-001"]),
            SSOSessionListing(sid: "s2", userID: 1, email: "alice@example.com", authTime: now, createdAt: now, expiresAt: now + 60,
                              endedAt: nil, amr: ["pwd", "otp"], state: .active),
            SSOSessionListing(sid: "s3", userID: 1, email: "alice@example.com", authTime: now, createdAt: now, expiresAt: now + 60,
                              endedAt: nil, amr: ["hwk", "mfa"], state: .active, userAgent: "curl/8.5.0", clientIDs: []),
        ]
        let sections = [
            AccountPage.passkeysSection(passkeys, formToken: "t", confirmed: true, messages: messages),
            AccountPage.passkeysSection([], formToken: "t", confirmed: false, messages: messages),
            AccountSessionsSection.render(sessions: sessions, currentSID: "s1", formToken: "t", messages: messages),
            AccountReauthentication.section(formToken: "t", secondsLeft: nil, messages: messages),
            AccountReauthentication.section(formToken: "t", secondsLeft: 200, messages: messages),
            AccountPasswordResponder.section(formToken: "t", messages: messages),
            AccountDeletion.section(formToken: "t", messages: messages),
            AccountTOTPResponder.section(formToken: "t", recoveryCodesLeft: 3, confirmed: true, messages: messages),
            AccountTOTPResponder.section(formToken: "t", recoveryCodesLeft: 0, confirmed: false, messages: messages),
            AccountTOTPResponder.section(formToken: "t", recoveryCodesLeft: nil, confirmed: true, messages: messages),
        ]
        var pages: [(String, String)] = [
            ("sign-in failed", AccountPage.signInFailed(messages).bodyText),
            ("account", AccountPage.render(user: Self.alice, formToken: "t", notice: nil, sections: sections, messages: messages).bodyText),
            ("signed out of /logout", LogoutPages.signedOut(messages).bodyText),
            ("signed out, back to the app", LogoutPages.signedOut(messages, returnTo: "myapp:auth/logout").bodyText),
            ("logout confirmation", LogoutPages.confirm(fields: [("confirm", "x")], app: nil, messages).bodyText),
            ("logout confirmation for an app", LogoutPages.confirm(fields: [("confirm", "x")], app: "Demo", messages).bodyText),
        ]
        // The getting-in pages, with and without the login page's `req`.
        for req in [nil, "req-token"] {
            let page = GettingInPage(messages: messages, req: req)
            pages += [
                ("forgot form", PasswordResetPages.forgotForm(page, email: "a@example.com", error: PageText("signup.invalid_email")).bodyText),
                ("check your email", page.checkYourEmail("a@example.com").bodyText),
                ("invalid link", page.invalidLink(again: "/login/forgot", againKey: "reset.ask_again").bodyText),
                ("reset form", page.newPasswordForm(action: "/login/reset", titleKey: "reset.title", token: "t", email: "a@example.com",
                                                    error: PageText("password_rule.common")).bodyText),
                ("invitation form", page.newPasswordForm(action: "/login/invitation", titleKey: "invitation.title", token: "t",
                                                         email: "a@example.com", error: PageText("getting_in.mismatch")).bodyText),
                ("sign-up form", SignUpPages.form(page, email: "a@example.com", name: "A", error: PageText("password_rule.email")).bodyText),
            ]
        }
        let step = LoginStep(cookieSecret: "c", formToken: "f", address: "192.0.2.1", clientID: "app", messages: messages)
        pages.append(("unverified sign-in", SignUpPages.unverified(email: "a@example.com", step: step).bodyText))
        for text in ["verify.title", "verify.lead", "verify.submit", "verify.done", "verify.done_title", "verify.sign_in_to_resend", "reset.done",
                     "invitation.done", "signup.closed_title", "signup.closed_lead", "signup.invalid_name", "password_rule.too_short",
                     "password_rule.too_long", "login.forgot", "login.create_account", "verify.password_lead", "verify.password_missing",
                     "verify.password_wrong", "email.heading", "email.verified", "email.unverified", "email.new", "email.how", "email.submit",
                     "email_change.title", "email_change.lead", "email_change.submit", "email_change.done_title", "email_change.done",
                     "email_change.to_account", "email_change.taken_title", "email_change.taken", "email_change.ask_again", "email_revert.title",
                     "email_revert.lead", "email_revert.done"] {
            pages.append(("text \(text)", messages.html(text)))
        }
        for notice in AccountPage.notices.keys.sorted() {
            let line = AccountPage.noticeLine(notice, messages)
            XCTAssertFalse(line.isEmpty, notice)
            pages.append(("notice \(notice)", line))
        }
        let errors: [PageText] = [
            PageText("error.signin_malformed", ["reason": "badEncoding"]), PageText("error.unknown_client"),
            PageText("error.unregistered_redirect"), PageText("error.parameter_control_character", ["name": "client_id"]),
            PageText("error.parameter_repeated", ["name": "client_id"]), PageText("error.parameter_missing", ["name": "redirect_uri"]),
            PageText("error.request_unreadable"), PageText("error.request_expired"), PageText("error.cross_site_form"),
            PageText("error.login_form_malformed", ["reason": "badEncoding"]), PageText("error.foreign_form"),
            PageText("error.email_control_character"), PageText("account.cross_site"), PageText("logout.malformed"),
            PageText("logout.malformed_reason", ["reason": "badEncoding"]), PageText("logout.foreign_id_token"), PageText("logout.two_apps"),
            PageText("logout.unnamed_app"), PageText("error.federation_state"),
        ]
        for (index, message) in errors.enumerated() {
            let title = ["error.signin_title", "account.error_title", "logout.error_title"][index % 3]
            let details = IntegratorErrorDetails(code: .invalidRequest, parameter: "client_id", request: Request(method: "GET", path: "/", requestID: "r"))
            pages.append(("error \(message.key)", ErrorPage.render(title: title, message: message, messages: messages, detail: "d",
                                                                   integrator: index % 2 == 0 ? details : nil).bodyText))
        }
        for text in ["account.sign_in_again", "account.form_malformed", "account.form_foreign", "passkeys.limit_reached",
                     "passkeys.not_added", "passkeys.sign_in_refused", "totp.qr_label", "totp.wrong_code", "login.continue_with", "login.or",
                     "login.federation_failed", "login.federation_no_email", "login.federation_link", "sessions.method_provider",
                     "links.heading", "links.lead", "links.linked", "links.unlink"] {
            pages.append(("text \(text)", messages.html(text)))
        }
        return pages
    }

    static let firefox = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"

    func testNoPageShowsAKeyInEitherLanguage() throws {
        for language in ["en", "de"] {
            for (what, html) in try everyPage(Catalogues.real.messages(language)) { assertNoKey(html, "\(language) \(what)") }
        }
        // The check itself: with no catalogue, the keys show.
        let bare = try everyPage(MessageCatalogue.empty.defaultMessages)
        XCTAssertTrue(bare.allSatisfy { !Self.keyPattern.matches(in: $0.1, range: NSRange($0.1.startIndex..., in: $0.1)).isEmpty },
                      bare.map(\.0).joined(separator: ", "))
    }

    func testTheShellIsTheStaticPagesOneInThePagesLanguage() throws {
        let german = AccountPage.signInFailed(Catalogues.german)
        let html = german.bodyText
        XCTAssertTrue(html.hasPrefix("<!doctype html>\n<html lang=\"de\">\n"), html)
        XCTAssertEqual(german.header("Content-Language"), "de")
        XCTAssertEqual(german.header("Cache-Control"), "no-store")
        XCTAssertEqual(german.header("Vary"), "Accept-Language")
        XCTAssertTrue(html.contains("<title>Ihr Konto · Gatehouse</title>"), html)
        XCTAssertTrue(html.contains("<link rel=\"icon\" href=\"/img/gatehouse.svg\">"))
        XCTAssertTrue(html.contains("<header class=\"brand\"><img src=\"/img/gatehouse.svg\" alt=\"\" width=\"32\" height=\"32\">"
                                    + "<span>Gatehouse</span></header>"))
        XCTAssertTrue(html.contains("<meta name=\"referrer\" content=\"same-origin\">"))
        XCTAssertTrue(html.contains("<script src=\"/js/webauthn-json.js\" defer></script>\n<script src=\"/js/account.js\" defer></script>\n</head>"))

        let logout = LogoutPages.signedOut(Catalogues.english).bodyText
        XCTAssertTrue(logout.contains("<html lang=\"en\">") && logout.contains("<meta name=\"referrer\" content=\"no-referrer\">"))
        XCTAssertFalse(logout.contains("<script"))
        let error = ErrorPage.render(title: "error.signin_title", message: PageText("error.parameter_missing", ["name": "<b>"]),
                                     messages: Catalogues.english, detail: "why")
        XCTAssertTrue(error.bodyText.contains("<p role=\"alert\">The request has no &lt;b&gt;.</p>"), error.bodyText)
        XCTAssertTrue(error.bodyText.contains("<meta name=\"referrer\" content=\"no-referrer\">"))
        XCTAssertFalse(error.bodyText.contains("<script"))
        XCTAssertEqual(error.logDetail, "why")
        XCTAssertEqual(error.status, 400)
    }

    func testTheBrandComesFromTheCatalogueAndIsEscaped() throws {
        var tables = Catalogues.tables
        tables["en"]?["brand.name"] = "Acme & Co"
        tables["en"]?["brand.logo"] = "/img/brand-logo.png"
        let messages = try MessageCatalogue(tables: tables, defaultLanguage: "en").messages("en")
        let html = LogoutPages.confirm(fields: [("state", "a&b\"<")], app: "Shop <&>", messages).bodyText
        XCTAssertTrue(html.contains("<title>Sign out? · Acme &amp; Co</title>"), html)
        XCTAssertTrue(html.contains("<img src=\"/img/brand-logo.png\""))
        XCTAssertTrue(html.contains("<span>Acme &amp; Co</span>"))
        XCTAssertTrue(html.contains("<input type=\"hidden\" name=\"state\" value=\"a&amp;b&quot;&lt;\">"), html)
        XCTAssertTrue(html.contains("<strong id=\"logout-app\">Shop &lt;&amp;&gt;</strong>"), html)
    }

    func testTheAccountPageKeepsItsIdsAndEnglishTexts() throws {
        let english = Catalogues.english
        let page = AccountPage.render(user: Self.alice, formToken: "t", notice: "removed",
                                      sections: [AccountPage.passkeysSection([], formToken: "t", confirmed: true, messages: english)], messages: english).bodyText
        XCTAssertTrue(page.contains("<p class=\"lead\">Signed in as <strong id=\"account-name\">Alice &lt;Admin&gt;</strong> "
                                    + "(<span id=\"account-email\">alice@example.com</span>).</p>"), page)
        XCTAssertTrue(page.contains("<p class=\"notice\" role=\"status\">The passkey was removed.</p>"))
        XCTAssertTrue(page.contains("<p class=\"alert\" id=\"passkey-error\" data-message=\"The passkey was not added\" hidden></p>"), page)
        XCTAssertTrue(page.contains("placeholder=\"e.g. My phone\""))
    }

    // MARK: /account

    func accountRequest(_ path: String = AccountResponder.pagePath, cookie: String?, language: String?) -> Request {
        var headers: [String: String] = [:]
        if let cookie { headers["cookie"] = "\(SSOSessions.cookieName)=\(cookie)" }
        if let language { headers["accept-language"] = language }
        return Request(method: "GET", path: path, headers: headers)
    }

    func testTheAccountPageIsInTheBrowsersLanguage() throws {
        let account = AccountResponder(services: harness.services)
        let signIn = try harness.signIn()
        let german = harness.run(account, accountRequest(cookie: signIn.sessionSecret, language: "de-CH, en;q=0.5"))
        XCTAssertEqual(german.status, 200)
        XCTAssertTrue(german.bodyText.contains("<html lang=\"de\">"))
        XCTAssertTrue(german.bodyText.contains("<h2 id=\"sessions-heading\">Sitzungen und Geräte</h2>"), german.bodyText)
        XCTAssertTrue(german.bodyText.contains("<h2>Bestätigen Sie, dass Sie es sind</h2>"), "confirm it's you, before the changes")
        XCTAssertEqual(german.header("Content-Language"), "de")
        assertNoKey(german.bodyText, "German account page")

        let english = harness.run(account, accountRequest(cookie: signIn.sessionSecret, language: "fr, en-GB;q=0.8, de;q=0.7"))
        XCTAssertTrue(english.bodyText.contains("<html lang=\"en\">") && english.bodyText.contains("Sessions and devices"))
        let fallback = harness.run(account, accountRequest(cookie: signIn.sessionSecret, language: nil))
        XCTAssertTrue(fallback.bodyText.contains("<html lang=\"en\">"), "no Accept-Language: the default")

        let failed = harness.run(account, Request(method: "GET", path: AccountClient.callbackPath, headers: ["accept-language": "de"]))
        XCTAssertTrue(failed.bodyText.contains("<p class=\"lead\" id=\"signed-out\">Sie sind in diesem Browser nicht angemeldet.</p>"))
    }

    func testTheTOTPSetupPageAndTheAccountErrorsAreInTheBrowsersLanguage() throws {
        let signIn = try harness.signIn()
        let formToken = AccountFormToken.expected(for: signIn.sessionSecret)
        let headers = ["cookie": "\(SSOSessions.cookieName)=\(signIn.sessionSecret)", "sec-fetch-site": "same-origin",
                       "origin": harness.issuerOrigin, "accept-language": "de"]
        let totp = AccountTOTPResponder(services: harness.services)
        let setup = harness.run(totp, H.formRequest(AccountTOTPResponder.startPath, RequestParameters([("csrf", formToken), ("current", H.password)]),
                                                    headers: headers))
        XCTAssertEqual(setup.status, 200, setup.bodyText)
        XCTAssertTrue(setup.bodyText.contains("<h1>Authenticator-App einrichten</h1>"), setup.bodyText)
        XCTAssertTrue(setup.bodyText.contains("aria-label=\"QR-Code für Ihre Authenticator-App\""))
        XCTAssertTrue(setup.bodyText.contains("Diese Einrichtung läuft in 10 Minuten ab."))
        assertNoKey(setup.bodyText, "TOTP setup")

        let afterName = try XCTUnwrap(setup.bodyText.range(of: "name=\"pending\" value=\"")).upperBound
        let pending = setup.bodyText[afterName...].prefix { $0 != "\"" }
        let wrong = harness.run(totp, H.formRequest(AccountTOTPResponder.confirmPath,
                                                    RequestParameters([("csrf", formToken), ("pending", String(pending)), ("code", "000000")]),
                                                    headers: headers))
        XCTAssertTrue(wrong.bodyText.contains("id=\"totp-error\">Dieser Code ist nicht richtig."), wrong.bodyText)

        var crossSite = headers
        crossSite["sec-fetch-site"] = "cross-site"
        let refused = harness.run(totp, H.formRequest(AccountTOTPResponder.startPath, RequestParameters([("csrf", formToken)]), headers: crossSite))
        XCTAssertEqual(refused.status, 403)
        XCTAssertTrue(refused.bodyText.contains("Diese Anfrage wurde von einer anderen Website gesendet."), refused.bodyText)

        let account = AccountResponder(services: harness.services)
        let foreign = harness.run(account, H.formRequest(AccountResponder.optionsPath, RequestParameters([("csrf", "not-it")]), headers: headers))
        XCTAssertEqual(foreign.status, 403)
        XCTAssertEqual(foreign.jsonObject()["error_description"] as? String, "Dieses Formular gehört nicht zu Ihrer Sitzung",
                       "the page's script shows it to the user")
    }

    // MARK: /logout

    func logoutRequest(_ query: String, language: String?) -> Request {
        Request(method: "GET", path: "/logout", query: query, headers: language.map { ["accept-language": $0] } ?? [:])
    }

    func testLogoutPagesFollowUILocalesThenAcceptLanguage() throws {
        let german = harness.run(logout, logoutRequest("", language: "de"))
        XCTAssertEqual(german.status, 200)
        XCTAssertTrue(german.bodyText.contains("<html lang=\"de\">") && german.bodyText.contains("<h1>Sie sind abgemeldet</h1>"), german.bodyText)

        let asked = harness.run(logout, logoutRequest("ui_locales=de", language: "en"))
        XCTAssertTrue(asked.bodyText.contains("<h1>Sie sind abgemeldet</h1>"), "ui_locales wins over Accept-Language")
        let unknown = harness.run(logout, logoutRequest("ui_locales=fr-CA%20ja", language: "de"))
        XCTAssertTrue(unknown.bodyText.contains("<h1>Sie sind abgemeldet</h1>"), "no page in fr or ja: Accept-Language")
        let english = harness.run(logout, logoutRequest("ui_locales=en", language: "de"))
        XCTAssertTrue(english.bodyText.contains("<h1>You are signed out</h1>"))

        let error = harness.run(logout, logoutRequest("client_id=nobody&ui_locales=de", language: "en"))
        XCTAssertEqual(error.status, 400)
        XCTAssertTrue(error.bodyText.contains("<h1>Fehler bei der Abmeldung</h1>"), error.bodyText)
        XCTAssertTrue(error.bodyText.contains("ist bei diesem Anmeldedienst nicht registriert."))
        XCTAssertEqual(error.logDetail, "unknown client")
        let malformed = harness.run(logout, logoutRequest("state=a&state=b", language: "de"))
        XCTAssertTrue(malformed.bodyText.contains("Die Abmeldeanfrage ist fehlerhaft."), malformed.bodyText)
    }

    func testTheLogoutConfirmationIsInTheAskedLanguageAndItsFormKeepsIt() throws {
        let tokens = try signInAndExchange()
        // No id_token_hint speaks for this browser's session: it is asked first.
        let query = "client_id=mobile-app-001&ui_locales=de%20en&state=s"
        let confirm = harness.run(logout, Request(method: "GET", path: "/logout", query: query,
                                                  headers: ["cookie": "\(SSOSessions.cookieName)=\(tokens.sessionSecret)",
                                                            "accept-language": "en"]))
        XCTAssertEqual(confirm.status, 200)
        XCTAssertTrue(confirm.bodyText.contains("<h1>Abmelden?</h1>"), confirm.bodyText)
        XCTAssertTrue(confirm.bodyText.contains("<input type=\"hidden\" name=\"ui_locales\" value=\"de en\">"), confirm.bodyText)
    }

    // MARK: /authorize

    func testAuthorizeErrorPagesFollowUILocalesThenAcceptLanguage() throws {
        let unknown = H.authorizationParameters(clientID: "nobody")
        let byBrowser = harness.run(harness.authorize, Request(method: "GET", path: "/authorize", query: unknown.encoded,
                                                               headers: ["accept-language": "de-DE,de;q=0.9"]))
        XCTAssertEqual(byBrowser.status, 400)
        XCTAssertTrue(byBrowser.bodyText.contains("<html lang=\"de\">"))
        XCTAssertTrue(byBrowser.bodyText.contains("<h1>Fehler bei der Anmeldung</h1>"), byBrowser.bodyText)
        XCTAssertEqual(byBrowser.logDetail, "unknown client_id")

        let asked = harness.run(harness.authorize, Request(method: "GET", path: "/authorize", query: unknown.adding("ui_locales", "de").encoded,
                                                           headers: ["accept-language": "en"]))
        XCTAssertTrue(asked.bodyText.contains("<h1>Fehler bei der Anmeldung</h1>"), "ui_locales wins over Accept-Language")
        let english = harness.authorizeGET(unknown)
        XCTAssertTrue(english.bodyText.contains("<h1>Sign-in error</h1>") && english.bodyText.contains("<html lang=\"en\">"))

        let noRedirect = H.authorizationParameters().removing("redirect_uri").adding("ui_locales", "de")
        let missing = harness.run(harness.authorize, Request(method: "GET", path: "/authorize", query: noRedirect.encoded))
        XCTAssertTrue(missing.bodyText.contains("Der Anfrage fehlt der Parameter redirect_uri."), missing.bodyText)
        let malformed = harness.run(harness.authorize, Request(method: "GET", path: "/authorize", query: "client_id=%zz",
                                                               headers: ["accept-language": "de"]))
        XCTAssertTrue(malformed.bodyText.contains("Die Anmeldeanfrage ist fehlerhaft ("), malformed.bodyText)
    }

    func testTheLoginPageIsAskedForInTheUILocalesLanguage() throws {
        let withGerman = try harness.startLogin(H.authorizationParameters().adding("ui_locales", "fr-CA de-AT en"))
        XCTAssertEqual(withGerman.response.locationQuery["lang"], "de", withGerman.response.location ?? "")
        XCTAssertTrue(withGerman.response.location?.hasSuffix("&lang=de") ?? false)
        let english = try harness.startLogin(H.authorizationParameters().adding("ui_locales", "en"))
        XCTAssertEqual(english.response.locationQuery["lang"], "en")
        for unusable in ["fr", "x<y", ""] {
            let none = try harness.startLogin(H.authorizationParameters().adding("ui_locales", unusable))
            XCTAssertNil(none.response.locationQuery["lang"], unusable)
        }
        let browser = harness.run(harness.authorize, Request(method: "GET", path: "/authorize", query: H.authorizationParameters().encoded,
                                                             headers: ["accept-language": "de"]))
        XCTAssertNil(browser.locationQuery["lang"], "without ui_locales nginx picks from Accept-Language itself")
    }

    func testAPushedRequestsUILocalesPicksTheLoginPageAndErrorLanguage() throws {
        let par = try PushedAuthorizationResponder(services: harness.services)
        let pushed = harness.run(par, H.formRequest("/par", H.authorizationParameters().adding("ui_locales", "de")))
        XCTAssertEqual(pushed.status, 201, pushed.bodyText)
        let requestURI = try XCTUnwrap(pushed.jsonObject()["request_uri"] as? String)
        let byReference = RequestParameters([("client_id", "mobile-app-001"), ("request_uri", requestURI)])
        let login = harness.authorizeGET(byReference)
        XCTAssertEqual(login.locationBase, "/login.html")
        XCTAssertEqual(login.locationQuery["lang"], "de", login.location ?? "")

        let used = harness.run(harness.authorize, Request(method: "GET", path: "/authorize",
                                                          query: byReference.adding("ui_locales", "de").encoded))
        XCTAssertTrue(used.bodyText.contains("Die Anmeldeanfrage ist abgelaufen oder wurde bereits verwendet."), used.bodyText)
        XCTAssertEqual(used.logDetail, "request_uri refused: used")

        let refused = harness.run(par, H.formRequest("/par", H.authorizationParameters().setting("redirect_uri", "myapp:evil")))
        XCTAssertEqual(refused.jsonObject()["error_description"] as? String, "redirect_uri is not registered for this client",
                       "for the client's developer: English")
    }

    // MARK: /login

    /// `password` nil: refused without counting against the account.
    func loginPost(_ pending: PendingLogin, password: String? = H.password, lang: String?, acceptLanguage: String? = nil,
                   req: String? = nil) -> Response {
        var pairs = [("req", req ?? pending.formToken), ("email", DemoData.email)]
        if let password { pairs.append(("password", password)) }
        if let lang { pairs.append(("lang", lang)) }
        var headers = H.cookieHeader([PendingAuthorizations.cookieName: pending.cookieSecret])
        headers["origin"] = harness.issuerOrigin
        if let acceptLanguage { headers["accept-language"] = acceptLanguage }
        return harness.run(harness.login, H.formRequest("/login", RequestParameters(pairs), headers: headers))
    }

    func testTheLoginResponderKeepsThePagesLanguageInItsRedirects() throws {
        let pending = try harness.startLogin()
        let wrong = loginPost(pending, password: "wrong", lang: "de")
        XCTAssertEqual(wrong.locationBase, "/login.html")
        XCTAssertEqual(wrong.locationQuery["error"], "invalid_credentials")
        XCTAssertEqual(wrong.locationQuery["lang"], "de", wrong.location ?? "")
        for ignored in ["xx", "<script>", "de de", "DE-x-\u{1}"] {
            let response = loginPost(pending, password: nil, lang: ignored, acceptLanguage: "de")
            XCTAssertEqual(response.locationQuery["error"], "invalid_credentials", ignored)
            XCTAssertNil(response.locationQuery["lang"], "\(ignored): \(response.location ?? "")")
            XCTAssertFalse(response.location?.contains("script") ?? true)
        }
        let none = loginPost(pending, password: nil, lang: nil)
        XCTAssertNil(none.locationQuery["lang"])

        let foreign = loginPost(pending, lang: "de", acceptLanguage: "en", req: "not-the-token")
        XCTAssertEqual(foreign.status, 403)
        XCTAssertTrue(foreign.bodyText.contains("<html lang=\"de\">"), foreign.bodyText)
        XCTAssertTrue(foreign.bodyText.contains("Dieses Anmeldeformular gehört nicht zu Ihrer Anmeldeanfrage."))
        let byBrowser = loginPost(pending, lang: "xx", acceptLanguage: "de", req: "not-the-token")
        XCTAssertTrue(byBrowser.bodyText.contains("<html lang=\"de\">"), "an unusable lang: Accept-Language")

        // Signed in: the app's redirect, no lang of ours on it.
        let done = loginPost(pending, lang: "de")
        XCTAssertEqual(done.locationQuery["code"]?.isEmpty, false, done.location ?? "")
        XCTAssertNil(done.locationQuery["lang"])
        // The request is used up: back to the start, in the same language.
        let expired = loginPost(pending, lang: "de")
        XCTAssertEqual(expired.location, "/login.html?error=expired&lang=de")
    }

    func testTheCodeStepKeepsThePagesLanguage() throws {
        try harness.services.totp.enrol(userID: harness.alice.id, secret: Array(repeating: 7, count: TOTP.secretByteCount), usedStep: 0)
        let pending = try harness.startLogin()
        let codePage = loginPost(pending, lang: "de")
        XCTAssertEqual(codePage.locationBase, "/login-otp.html", codePage.location ?? "")
        XCTAssertEqual(codePage.locationQuery["lang"], "de")
        var headers = H.cookieHeader([PendingAuthorizations.cookieName: pending.cookieSecret])
        headers["origin"] = harness.issuerOrigin
        let wrongCode = harness.run(harness.login, H.formRequest("/login", RequestParameters([("req", pending.formToken), ("otp", "abc"),
                                                                                              ("lang", "de")]), headers: headers))
        XCTAssertEqual(wrongCode.locationQuery["error"], "invalid_code")
        XCTAssertEqual(wrongCode.locationQuery["lang"], "de", wrongCode.location ?? "")
    }
}
