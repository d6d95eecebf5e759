import Foundation
import ResourceServer
import SSOCore

// Resource server B: one process of the pool behind https://<api-b>/api/records.
do {
    let config = try GatehouseConfig.load()
    let responder = try ServerB.makeResponder(config: config, environment: ProcessInfo.processInfo.environment)
    FastCGIServer.serve(endpoint: ServerB.endpoint, responder: responder)
} catch {
    RequestLog.event(endpoint: ServerB.endpoint, message: "cannot start: \(error)")
    exit(1)
}
