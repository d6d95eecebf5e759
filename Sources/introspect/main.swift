import AuthServer
import SSOCore

// The introspection responder: POST /introspect (RFC 7662).
ResponderProcess.run(endpoint: "introspect") { config in
    IntrospectionResponder(config: config, database: try IssuerSchema.open(config))
}
