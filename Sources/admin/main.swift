import AuthServer
import IssuerComposition
import SSOCore

// The admin API responder: ISSUER/admin/v1/ (docs/ADMIN-API.md).
ResponderProcess.run(endpoint: "admin") { config in
    try IssuerComposition.routeTable(.admin, config)
}
