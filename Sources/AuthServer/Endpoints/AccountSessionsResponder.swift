import IssuerStorage
import SSOCore

/// `/account`'s "Sessions and devices" forms (AccountSessionsSection):
///
/// - `POST /account/sessions/end` (`csrf`, `sid`): ends one live session of
///   the signed-in user and revokes its refresh tokens and device secrets,
///   in one write unit; back to `/account?done=session_ended`, or, when it
///   was this browser's session, to `/account`, which then shows the
///   signed-out page. Another user's session, or an unknown or ended one,
///   changes nothing: `/account?done=session_not_found`.
/// - `POST /account/sessions/end-all` (`csrf`): "Sign out everywhere":
///   every session of the user ends, with every refresh token and device
///   secret bound to one, this browser's included; back to `/account`.
///
/// Both pass AccountChangeEndpoints' guards (Fetch Metadata, Origin, the
/// session's form token): another site cannot sign anyone out.
public final class AccountSessionsResponder: RoutedEndpointGroup {
    public static let endPath = "/account/sessions/end"
    public static let endAllPath = "/account/sessions/end-all"
    public static let paths = [endPath, endAllPath]

    public let table: RouteTable

    public init(services: IssuerServices) {
        let changes = services.accountChangeEndpoints
        let ending = AccountSessionEnding(selfService: changes.selfService)
        table = RouteTable([changes.row(Self.endPath, ending.end), changes.row(Self.endAllPath, ending.endAll)])
    }
}

/// The two forms' handlers.
struct AccountSessionEnding {
    let selfService: AccountSelfService

    func end(_ exchange: EndpointExchange) throws -> Response {
        let signedIn = try exchange.signedIn(), user = signedIn.user
        guard let sid = try? exchange.parameters.single("sid"), !sid.isEmpty, sid.utf8.count <= 64 else {
            return AccountResponder.back("session_not_found", "no sid to end for user \(user.id)")
        }
        guard try selfService.endOwnSession(sid: sid, userID: user.id) else {
            return AccountResponder.back("session_not_found", "no live session to end for user \(user.id)")
        }
        SecurityEvents.sessionEnded(user: user.email, ip: exchange.request.remoteAddress, sid: signedIn.session.sid, endedSID: sid)
        guard !sid.bytesEqual(signedIn.session.sid) else { return signedOut().logging("user \(user.id) ended this browser's session") }
        return AccountResponder.back("session_ended", "user \(user.id) ended one of their sessions")
    }

    func endAll(_ exchange: EndpointExchange) throws -> Response {
        let signedIn = try exchange.signedIn(), user = signedIn.user
        let ended = try selfService.endEverySession(userID: user.id)
        SecurityEvents.signedOutEverywhere(user: user.email, ip: exchange.request.remoteAddress, sid: signedIn.session.sid, ended: ended.count)
        return signedOut().logging("user \(user.id) signed out everywhere (\(ended.count) sessions)")
    }

    /// Back to `/account`, which shows the signed-out page; the browser
    /// forgets its cookie, whose session has ended.
    func signedOut() -> Response {
        var response = Response.redirect(to: AccountResponder.pagePath)
        response.addCookie(.expired(name: SSOSessions.cookieName))
        return response
    }
}
