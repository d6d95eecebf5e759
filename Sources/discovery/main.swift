import AuthServer
import IssuerComposition
import SSOCore

// The discovery responder: /.well-known/openid-configuration, with the
// registered APIs' scopes and the languages of the pages.
ResponderProcess.run(endpoint: "discovery") { config in
    try IssuerComposition.routeTable(.discovery, config)
}
