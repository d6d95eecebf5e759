import Foundation
import XCTest
@testable import AuthServer
import IssuerStorage
import SSOCore

/// What the static login page is told beside its `req`: the app's name,
/// asked of the login process by `client_id` (ClientNameResponder), and the
/// address typed before a wrong password (LoginPageLocation).
final class LoginPageNameTests: SignInTestCase {
    typealias H = SignInHarness

    func name(_ query: String) -> Response {
        harness.run(ClientNameResponder(services: harness.services), Request(method: "GET", path: ClientNameResponder.path, query: query))
    }

    func testTheLoginPageGetsTheAppsDisplayNameElseItsIdElseNothing() throws {
        let named = name("client_id=mobile-app-001")
        XCTAssertEqual(named.status, 200)
        XCTAssertEqual(named.bodyText, "Demo Mobile App 1")
        XCTAssertEqual(named.header("Content-Type"), "text/plain; charset=utf-8")
        XCTAssertEqual(named.header("Cache-Control"), "no-store")
        try issuer.clients.add(ClientRegistration(clientID: "plain-app", redirectURIs: ["com.example.plain:/cb"]))
        XCTAssertEqual(name("client_id=plain-app").bodyText, "plain-app", "no display name: the id")
        var rename = ClientChanges()
        rename.displayName = "Shop <b>&</b>"
        try issuer.clients.update(clientID: "plain-app", rename)
        XCTAssertEqual(name("client_id=plain-app").bodyText, "Shop <b>&</b>", "plain text: the page's SSI echo escapes it")
        for unknown in ["client_id=no-such-app", "client_id=%3Cscript%3E", "", "client_id=a&client_id=b", "client_id=%zz"] {
            XCTAssertEqual(name(unknown).status, 200, unknown)
            XCTAssertEqual(name(unknown).bodyText, "", "\(unknown): no name, and nothing from the URL")
        }
        XCTAssertEqual(harness.run(ClientNameResponder(services: harness.services),
                                   Request(method: "POST", path: ClientNameResponder.path)).status, 405)
    }

    func testAWrongPasswordKeepsTheTypedAddressAndNamesTheApp() throws {
        let pending = try harness.startLogin()
        XCTAssertEqual(harness.submitLogin(pending, email: "alice@example.com", password: "not it").location,
                       "/login.html?client_id=mobile-app-001&req=\(pending.formToken)&error=invalid_credentials&login_hint=alice@example.com")
        // As typed: the page's SSI echoes the raw query value (a form decoder would read "+" as a space; nothing here does).
        XCTAssertTrue(try XCTUnwrap(harness.submitLogin(pending, email: "bob+work@example.com", password: "not it").location)
                        .hasSuffix("&login_hint=bob+work@example.com"))
        // An address the URL cannot carry as it is (nginx's SSI cannot decode it) is not kept.
        for awkward in ["o'brien@example.com", "a&b@example.com", "jürgen@example.com", "a@b@example.com"] {
            let location = try XCTUnwrap(harness.submitLogin(pending, email: awkward, password: "not it").location)
            XCTAssertFalse(location.contains("login_hint"), location)
            XCTAssertTrue(location.hasSuffix("&error=invalid_credentials"), location)
        }
    }
}
