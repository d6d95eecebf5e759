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
/// Both go through AccountRequestGuard.admitChange (Fetch Metadata,
/// Origin, the session's form token): another site cannot sign anyone out.
public final class AccountSessionsResponder: Responder {
    let services: IssuerServices
    let guardian: AccountRequestGuard

    public static let endPath = "/account/sessions/end"
    public static let endAllPath = "/account/sessions/end-all"
    public static let paths = [endPath, endAllPath]

    public init(services: IssuerServices) {
        self.services = services
        guardian = AccountRequestGuard(services: services)
    }

    public func respond(to request: Request) throws -> Response {
        let signedIn: AccountRequestGuard.SignedIn, form: FormParameters
        switch try guardian.admitChange(request) {
        case .failure(let refused): return refused.response
        case .success(let admitted): (signedIn, form) = admitted
        }
        switch request.path {
        case Self.endPath: return try end(form, signedIn, address: request.remoteAddress)
        case Self.endAllPath: return try endAll(signedIn, address: request.remoteAddress)
        default: return .plainError(404, "not_found")
        }
    }

    func end(_ form: FormParameters, _ signedIn: AccountRequestGuard.SignedIn, address: String) throws -> Response {
        let user = signedIn.user
        guard let sid = try? form.single("sid"), !sid.isEmpty, sid.utf8.count <= 64 else {
            return AccountResponder.back("session_not_found", "no sid to end for user \(user.id)")
        }
        let now = services.clock()
        // Whose session it is is read in the write unit that ends it.
        let ended = try services.storage.write { tx -> Bool in
            guard let session = try tx.sessions.live(sid: sid, now: now), session.userID == user.id else { return false }
            try SessionBoundCredentials.endSession(session.sid, tx, now: now)
            return true
        }
        guard ended else {
            return AccountResponder.back("session_not_found", "no live session to end for user \(user.id)")
        }
        SecurityEvents.sessionEnded(user: user.email, ip: address, sid: signedIn.session.sid, endedSID: sid)
        guard !sid.bytesEqual(signedIn.session.sid) else { return signedOut().logging("user \(user.id) ended this browser's session") }
        return AccountResponder.back("session_ended", "user \(user.id) ended one of their sessions")
    }

    func endAll(_ signedIn: AccountRequestGuard.SignedIn, address: String) throws -> Response {
        let user = signedIn.user, now = services.clock()
        let ended = try services.storage.write { tx in try SessionBoundCredentials.endEverySession(userID: user.id, tx, now: now) }
        SecurityEvents.signedOutEverywhere(user: user.email, ip: address, sid: signedIn.session.sid, ended: ended.count)
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
