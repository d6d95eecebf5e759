import AuthServer
import IssuerComposition
import SSOCore

// The login responder: POST /login from the static login page, the login
// page's passkey sign-in (/login/passkey/options, /login/passkey), the app's
// name for the login page (/login/app-name, nginx's subrequests only), and
// the user's /account page with its sign-in callback and its endpoints.
ResponderProcess.run(endpoint: "login") { config in
    try IssuerComposition.routeTable(.login, config)
}
