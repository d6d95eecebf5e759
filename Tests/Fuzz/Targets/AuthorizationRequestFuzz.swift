// libFuzzer target: GET /authorize validation. The input is a query string;
// it is parsed by FormParser and handed to AuthorizationRequestValidator
// against a temporary issuer database holding the demo APIs and clients.
// Oracles: no crash; only AuthorizationFailure is thrown (anything else
// would become a 500); an error page never names a redirect, a redirect
// error only goes to a registered URI of the client; an accepted request
// satisfies every rule of docs/ARCHITECTURE.md (registered redirect URI, openid in an
// allowed scope, a valid S256 challenge, printable-ASCII state/nonce).
@testable import AuthServer
import FuzzIssuerFixture
import SSOCore

enum FuzzAuthorize {
    static let services = FuzzIssuer.shared.services
    static let clients = services.clients
    /// Built as AuthorizeResponder builds it.
    static let validator = AuthorizationRequestValidator(clients: clients, hints: services.idTokenHints, apis: services.apis,
                                                         issuer: services.settings.issuer)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAuthorizationRequest(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let form = try? FormParser.parse(bytes) else { return 0 }
    do {
        let request = try FuzzAuthorize.validator.validate(form)
        guard let client = try FuzzAuthorize.clients.find(clientID: request.clientID) else { preconditionFailure("accepted an unknown client") }
        precondition(RedirectURIMatcher.matches(requested: request.redirectURI, registered: client.redirectURIs), "unregistered redirect_uri accepted")
        precondition(request.scope.contains("openid") && request.scope.allSatisfy(client.scopes.contains), "scope outside the client's")
        precondition(PKCE.isValidS256Challenge(request.codeChallenge), "invalid code_challenge accepted")
        precondition(form.values("code_challenge_method").filter { !$0.isEmpty } == ["S256"],
                     "PKCE method other than S256 accepted")
        for text in [request.state, request.nonce, request.loginHint].compactMap({ $0 }) {
            precondition(text.utf8.allSatisfy { (0x20...0x7E).contains($0) }, "non-printable state/nonce/login_hint accepted")
        }
        precondition(!request.prompt.contains("none") || request.prompt.count == 1, "prompt=none combined")
    } catch let failure as AuthorizationFailure {
        if case .redirect(let redirectURI, let state, _) = failure {
            let clientID = (try? form.single("client_id")).flatMap { $0 } ?? ""
            guard let client = try? FuzzAuthorize.clients.find(clientID: clientID) else { preconditionFailure("redirect error for an unknown client") }
            precondition(RedirectURIMatcher.matches(requested: redirectURI, registered: client.redirectURIs), "redirect error to an unregistered URI")
            if let state { precondition(state.utf8.allSatisfy { (0x20...0x7E).contains($0) }, "non-printable state echoed") }
        }
    } catch {
        preconditionFailure("validate threw something other than AuthorizationFailure: \(error)")
    }
    return 0
}
