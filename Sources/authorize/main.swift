import AuthServer
import SSOCore

// The authorize responder: GET|POST /authorize.
ResponderProcess.run(endpoint: "authorize") { config in
    AuthorizeResponder(config: config, database: try IssuerSchema.open(config))
}
