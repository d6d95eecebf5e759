import FoundationEssentials
import ResourceServer
import SSOCore

// Resource server B: GET /api/records.
ResponderProcess.run(endpoint: ServerB.endpoint) { config in
    try ServerB.makeResponder(config: config, environment: ProcessInfo.processInfo.environment)
}
