import SSOCore

// Placeholder until the login responder lands.
fatalError("not built yet")
