import AuthServer
import IssuerComposition
import SSOCore

// The revocation responder: POST /revoke (RFC 7009).
ResponderProcess.run(endpoint: "revoke") { config in
    try IssuerComposition.routeTable(.revoke, config)
}
