import AuthServer
import Foundation
import SSOCore

// The discovery responder: /.well-known/openid-configuration.
do {
    let config = try GatehouseConfig.load()
    FastCGIServer.serve(endpoint: "discovery", responder: try DiscoveryResponder(document: DiscoveryDocument(config: config)))
} catch {
    RequestLog.event(endpoint: "discovery", message: "cannot start: \(error)")
    exit(1)
}
