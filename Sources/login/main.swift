import AuthServer
import IssuerComposition
import SSOCore

// The login responder: POST /login from the static login page, the login
// page's passkey sign-in (/login/passkey/options, /login/passkey), the app's
// name for the login page (/login/app-name, nginx's subrequests only), and
// the user's /account page with its sign-in callback and its endpoints.
ResponderProcess.run(endpoint: "login") { config in
    let services = try IssuerComposition.services(config, withPages: true)
    let login = try LoginResponder(services: services)
    let account = AccountResponder(services: services)
    var routes: [String: Responder] = ["/login": login, LoginResponder.passkeyOptionsPath: login, LoginResponder.passkeyPath: login,
                                       ClientNameResponder.path: ClientNameResponder(services: services)]
    for path in AccountResponder.paths { routes[path] = account }
    let sessions = AccountSessionsResponder(services: services)
    for path in AccountSessionsResponder.paths { routes[path] = sessions }
    let password = AccountPasswordResponder(services: services)
    for path in AccountPasswordResponder.paths { routes[path] = password }
    let totp = AccountTOTPResponder(services: services)
    for path in AccountTOTPResponder.paths { routes[path] = totp }
    return PathRouter(routes)
}
