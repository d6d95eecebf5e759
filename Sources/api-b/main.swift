import SSOCore
import ResourceServer

// Placeholder until the api-b responder lands.
fatalError("not built yet")
