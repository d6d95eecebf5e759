import AuthServer
import SSOCore

// The login responder: POST /login from the static login page.
ResponderProcess.run(endpoint: "login") { config in
    try LoginResponder(config: config, database: try IssuerSchema.open(config))
}
