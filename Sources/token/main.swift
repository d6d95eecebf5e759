import AuthServer
import Foundation
import SSOCore

// The token responder: one process of the pool behind POST /token.
do {
    let config = try GatehouseConfig.load()
    let database = try IssuerSchema.open(config)
    FastCGIServer.serve(endpoint: "token", responder: TokenResponder(config: config, database: database))
} catch {
    RequestLog.event(endpoint: "token", message: "cannot start: \(error)")
    exit(1)
}
