import IssuerStorage
import SSOCore

/// An authorization request answered by the browser's live sign-in
/// (the SSO cookie), without a page: a code for the request, bound to
/// that session, in one write unit.
public struct SilentSignIn {
    let storage: any IssuerStorage
    let codes: AuthorizationCodes
    let codeLifetime: Int

    public func issueCode(for request: AuthorizationRequest, session: SSOSession) throws -> String {
        let record = AuthorizationCodeGrantRecord(request: request, sid: session.sid, userID: session.userID, authTime: session.authTime,
                                                  amr: session.amr)
        return try storage.write { tx in try codes.issue(record, lifetime: codeLifetime, tx) }
    }
}
