import AuthServer
import SSOCore

// The logout responder: GET|POST /logout (RP-initiated logout).
ResponderProcess.run(endpoint: "logout") { config in
    LogoutResponder(config: config, database: try IssuerSchema.open(config))
}
