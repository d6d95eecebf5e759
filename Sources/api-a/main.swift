import FoundationEssentials
import ResourceServer
import SSOCore

// Resource server A: GET /api/data.
ResponderProcess.run(endpoint: ServerA.endpoint) { config in
    try ServerA.makeResponder(config: config, environment: ProcessInfo.processInfo.environment)
}
