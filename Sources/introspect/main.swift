import AuthServer
import IssuerComposition
import SSOCore

// The introspection responder: POST /introspect (RFC 7662).
ResponderProcess.run(endpoint: "introspect") { config in
    try IssuerComposition.routeTable(.introspect, config)
}
