import IssuerStorage

/// What ends with an SSO session, in the caller's write unit. The only way
/// the issuer ends sessions: a bare `tx.sessions.end` would leave the
/// session's refresh tokens and device secrets alive (the login responder
/// once did), and no endpoint calls one (SessionEndingRuleTests).
public enum SessionBoundCredentials {
    public static func revokeAll(sid: String, _ tx: any IssuerWrites, now: Int64) throws {
        // Refresh tokens of every app of the session, including those a
        // Native SSO exchange issued to other apps (bound to the same sid).
        try tx.refreshTokens.revokeAll(sid: sid, at: now)
        // Native SSO §3.2: the device secret stands for the user's
        // authentication on the device; once the session ends it must not
        // sign any app in again.
        try tx.deviceSecrets.revokeAll(sid: sid, at: now)
        // Access tokens need nothing: the issuer (userinfo, introspection)
        // refuses any whose session has ended; the resource servers, which
        // validate offline, honour them until they expire.
    }

    /// Ends the session for `reason` and revokes what is bound to it; its
    /// apps' backends are told (BackchannelLogoutQueue) when it was live.
    public static func endSession(_ sid: String, _ tx: any IssuerWrites, now: Int64, reason: SessionEndReason = .sessionEnded) throws {
        if try tx.sessions.end(sid: sid, at: now, reason: reason) {
            try BackchannelLogoutQueue.notify(endedSID: sid, reason: reason, tx, now: now)
        }
        try revokeAll(sid: sid, tx, now: now)
    }

    /// Ends every live session of the user for `reason` and revokes what is
    /// bound to any session row of theirs, ended or not (a refresh token
    /// outlives the session it names only if revoked here); the backends
    /// of the sessions it ended are told; returns those sids.
    public static func endEverySession(userID: Int64, _ tx: any IssuerWrites, now: Int64,
                                       reason: SessionEndReason = .sessionEnded) throws -> [String] {
        let ended = try tx.sessions.endAll(userID: userID, at: now, reason: reason)
        for sid in ended { try BackchannelLogoutQueue.notify(endedSID: sid, reason: reason, tx, now: now) }
        for sid in try tx.sessions.sids(userID: userID) { try revokeAll(sid: sid, tx, now: now) }
        return ended
    }
}
