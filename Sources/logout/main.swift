import AuthServer
import IssuerComposition
import SSOCore

// The logout responder: GET|POST /logout (RP-initiated logout).
ResponderProcess.run(endpoint: "logout") { config in
    try IssuerComposition.routeTable(.logout, config)
}
