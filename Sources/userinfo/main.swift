import AuthServer
import IssuerComposition
import SSOCore

// The userinfo responder: GET|POST /userinfo.
ResponderProcess.run(endpoint: "userinfo") { config in
    try IssuerComposition.routeTable(.userinfo, config)
}
