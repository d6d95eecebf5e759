import AuthServer
import IssuerComposition
import SSOCore

// The pushed authorization request responder: POST /par (RFC 9126).
ResponderProcess.run(endpoint: "par") { config in
    try IssuerComposition.routeTable(.par, config)
}
