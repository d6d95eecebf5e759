import AuthServer
import SSOCore

// The discovery responder: /.well-known/openid-configuration.
ResponderProcess.run(endpoint: "discovery") { config in
    try DiscoveryResponder(document: DiscoveryDocument(config: config))
}
