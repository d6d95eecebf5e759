import AuthServer
import SSOCore

// The revocation responder: POST /revoke (RFC 7009).
ResponderProcess.run(endpoint: "revoke") { config in
    RevocationResponder(config: config, database: try IssuerSchema.open(config))
}
