import AuthServer
import Foundation
import SSOCore

// The jwks responder: one process of the pool behind /.well-known/jwks.json.
do {
    let config = try GatehouseConfig.load()
    let database = try IssuerSchema.open(config)
    let responder = JWKSResponder(database: database, keys: SigningKeyStore(database: database, keysDirectory: config.keysDirectory))
    FastCGIServer.serve(endpoint: "jwks", responder: responder)
} catch {
    RequestLog.event(endpoint: "jwks", message: "cannot start: \(error)")
    exit(1)
}
