import AuthServer
import IssuerComposition
import SSOCore

// The authorize responder: GET|POST /authorize.
ResponderProcess.run(endpoint: "authorize") { config in
    AuthorizeResponder(services: try IssuerComposition.services(config, withPages: true))
}
