import SSOCore

// Placeholder until the logout responder lands.
fatalError("not built yet")
