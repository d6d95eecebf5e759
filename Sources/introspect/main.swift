import AuthServer
import IssuerComposition
import SSOCore

// The introspection responder: POST /introspect (RFC 7662).
ResponderProcess.run(endpoint: "introspect") { config in
    IntrospectionResponder(services: try IssuerComposition.services(config))
}
