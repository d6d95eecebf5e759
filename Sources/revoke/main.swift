import SSOCore

// Placeholder until the revoke responder lands.
fatalError("not built yet")
