import AuthServer
import IssuerComposition
import SSOCore

// The userinfo responder: GET|POST /userinfo.
ResponderProcess.run(endpoint: "userinfo") { config in
    try UserInfoResponder(services: try IssuerComposition.services(config))
}
