import IssuerStorage
import SSOCore

/// `GET /login/app-name?client_id=…`: the name the login page shows for
/// the app a sign-in is for (the client's display name, else its id), as
/// plain text for nginx's SSI (`include virtual … set=`), which the page
/// HTML-escapes. nginx serves the path to its own subrequests only
/// (`internal`), so it tells the outside nothing. An unknown or malformed
/// id answers an empty body: the page then shows its text without a name,
/// never a name taken from the URL.
public final class ClientNameResponder: OneEndpointGroup {
    public static let path = "/login/app-name"
    public let served: SingleEndpoint

    public init(services: IssuerServices) {
        let clients = services.clients
        // nginx's SSI subrequest is a GET; nothing else asks.
        served = SingleEndpoint(Endpoint(Self.path, .get, cache: .noStore) { exchange in
            let clientID = (try? exchange.request.queryParameters().single("client_id")) ?? nil
            let name = try clientID.flatMap { try clients.find(clientID: $0) }?.shownName ?? ""
            return Response(status: 200, headers: [("Content-Type", "text/plain; charset=utf-8")], body: Array(name.utf8))
        })
    }

}
