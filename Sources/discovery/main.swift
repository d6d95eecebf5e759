import AuthServer
import IssuerComposition
import SSOCore

// The discovery responder: /.well-known/openid-configuration, with the
// registered APIs' scopes.
ResponderProcess.run(endpoint: "discovery") { config in
    try DiscoveryResponder(document: DiscoveryDocument(config: config), apis: try IssuerComposition.services(config).apis)
}
