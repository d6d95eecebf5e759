import SSOCore

// Placeholder until the userinfo responder lands.
fatalError("not built yet")
