import SSOCore

// Placeholder until the authorize responder lands.
fatalError("not built yet")
