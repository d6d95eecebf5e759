import AuthServer
import SSOCore

// The userinfo responder: GET|POST /userinfo.
ResponderProcess.run(endpoint: "userinfo") { config in
    UserInfoResponder(config: config, database: try IssuerSchema.open(config))
}
