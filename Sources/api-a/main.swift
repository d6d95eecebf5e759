import SSOCore
import ResourceServer

// Placeholder until the api-a responder lands.
fatalError("not built yet")
