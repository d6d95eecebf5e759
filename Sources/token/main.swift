import AuthServer
import IssuerComposition
import SSOCore

// The token responder: POST /token.
ResponderProcess.run(endpoint: "token") { config in
    try IssuerComposition.routeTable(.token, config)
}
