import Foundation
import ResourceServer
import SSOCore

// Resource server A: one process of the pool behind https://<api-a>/api/data.
do {
    let config = try GatehouseConfig.load()
    let responder = try ServerA.makeResponder(config: config, environment: ProcessInfo.processInfo.environment)
    FastCGIServer.serve(endpoint: ServerA.endpoint, responder: responder)
} catch {
    RequestLog.event(endpoint: ServerA.endpoint, message: "cannot start: \(error)")
    exit(1)
}
