import AuthServer
import IssuerComposition
import SSOCore

// The login responder: POST /login from the static login page.
ResponderProcess.run(endpoint: "login") { config in
    try LoginResponder(services: try IssuerComposition.services(config))
}
