import AuthServer
import IssuerComposition
import SSOCore

// The authorize responder: GET|POST /authorize.
ResponderProcess.run(endpoint: "authorize") { config in
    try IssuerComposition.routeTable(.authorize, config)
}
