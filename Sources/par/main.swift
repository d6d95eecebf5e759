import AuthServer
import IssuerComposition
import SSOCore

// The pushed authorization request responder: POST /par (RFC 9126).
ResponderProcess.run(endpoint: "par") { config in
    try PushedAuthorizationResponder(services: try IssuerComposition.services(config, withPages: true))
}
