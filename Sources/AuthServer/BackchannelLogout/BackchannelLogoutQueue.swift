import FoundationEssentials
import IssuerStorage
import SSOCore

/// What a queued back-channel notice holds (the outbox row's `message`):
/// the session as it was when it ended. The user's subject is kept, not
/// looked up at delivery: an erased account has none by then.
public struct BackchannelLogoutNotice: Codable, Equatable, Sendable {
    public let sub: String
    public let sid: String
    public let reason: String
}

/// Back-Channel Logout 1.0 §2.7: "the OP ... sends a Logout Token to each
/// RP that had an active session with it" when a session ends. Called in
/// the write unit that ends the session (SessionBoundCredentials, account
/// erasure), so the notices exist exactly when the end commits, and a
/// rolled-back end tells nobody. One outbox row per client that was
/// issued tokens in the session and has a back-channel URI; the mail
/// sender (gatehouse-mailer) signs and POSTs each, at least once.
public enum BackchannelLogoutQueue {
    public static func notify(endedSID sid: String, reason: SessionEndReason, _ tx: any IssuerWrites, now: Int64) throws {
        let clientIDs = try tx.sessions.clientsIssuedTokens(sid: sid)
        guard !clientIDs.isEmpty, let session = try tx.sessions.listing(sid: sid, now: now),
              let user = try tx.users.find(id: session.userID) else { return }
        let notice = try JSONEncoder().encode(BackchannelLogoutNotice(sub: user.subject, sid: sid, reason: reason.rawValue))
        for clientID in clientIDs {
            guard try tx.clients.find(clientID: clientID)?.backchannelLogoutURI != nil else { continue }
            _ = try tx.mailOutbox.enqueue(kind: .backchannelLogout, recipient: clientID, message: Array(notice), now: now)
        }
    }
}
