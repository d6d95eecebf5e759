import AuthServer
import Foundation
import SSOCore

// The login responder: one process of the pool behind POST /login.
do {
    let config = try GatehouseConfig.load()
    let database = try IssuerSchema.open(config)
    FastCGIServer.serve(endpoint: "login", responder: try LoginResponder(config: config, database: database))
} catch {
    RequestLog.event(endpoint: "login", message: "cannot start: \(error)")
    exit(1)
}
