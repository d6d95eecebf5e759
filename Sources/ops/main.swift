import AuthServer
import IssuerComposition
import SSOCore

// The ops responder: /metrics, /health/live and /health/ready on the ops
// listener (loopback only).
ResponderProcess.run(endpoint: "ops") { config in
    try IssuerComposition.routeTable(.ops, config)
}
