import AuthServer
import IssuerComposition
import SSOCore

// The jwks responder: /.well-known/jwks.json.
ResponderProcess.run(endpoint: "jwks") { config in
    try IssuerComposition.routeTable(.jwks, config)
}
