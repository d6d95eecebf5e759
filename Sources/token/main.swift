import AuthServer
import SSOCore

// The token responder: POST /token.
ResponderProcess.run(endpoint: "token") { config in
    try TokenResponder(config: config, database: try IssuerSchema.open(config))
}
