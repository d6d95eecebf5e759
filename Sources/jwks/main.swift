import AuthServer
import SSOCore

// The jwks responder: /.well-known/jwks.json.
ResponderProcess.run(endpoint: "jwks") { config in
    let database = try IssuerSchema.open(config)
    return JWKSResponder(database: database, keys: SigningKeyStore(config: config, database: database))
}
