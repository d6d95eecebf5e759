import AuthServer
import Foundation
import SSOCore

// The authorize responder: one process of the pool behind /authorize.
do {
    let config = try GatehouseConfig.load()
    let database = try IssuerSchema.open(config)
    FastCGIServer.serve(endpoint: "authorize", responder: AuthorizeResponder(config: config, database: database))
} catch {
    RequestLog.event(endpoint: "authorize", message: "cannot start: \(error)")
    exit(1)
}
