import SSOCore

// Placeholder until the token responder lands.
fatalError("not built yet")
