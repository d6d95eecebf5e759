import SSOCore

// Placeholder until the introspect responder lands.
fatalError("not built yet")
