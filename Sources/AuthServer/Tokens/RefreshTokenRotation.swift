import IssuerStorage
import SSOCore

/// What presenting a refresh token led to.
public enum RefreshRotationOutcome: Equatable {
    /// The token was live: it is now spent and this is its one successor.
    case rotated(successor: String, record: RefreshTokenRecord)
    /// The token was spent moments ago and its successor is still unused:
    /// the same successor again (a retry after a lost reply).
    case replayed(successor: String, record: RefreshTokenRecord)
    /// Unknown, expired, revoked, another client's, or its session ended:
    /// the log's text and what the app is told.
    case refused(String, RefreshRefusal)
    /// A spent token was presented outside the grace window, or after its
    /// successor was used: the whole family (this one) has been revoked.
    case reuseDetected(familyID: String, userID: Int64)
}

/// Refresh token rotation (RFC 9700 §4.14.2) in one write unit per
/// presentation. The winner is decided by one conditional UPDATE
/// (RefreshTokenStore.claim), tried first, so the common case is that one
/// statement and the successor's INSERT. Of concurrent presentations of
/// one token, on any node, exactly one spends it; the others find it spent
/// and, within the grace window, get that same successor. There are never
/// two live successors.
public final class RefreshTokenRotation {
    let storage: any IssuerStorage
    let sealingKey: [UInt8]
    let clock: Clock

    public init(storage: any IssuerStorage, sealingKey: [UInt8], clock: @escaping Clock = systemClock) {
        self.storage = storage
        self.sealingKey = sealingKey
        self.clock = clock
    }

    /// `check` runs on the presented token's record before the write unit
    /// commits; what it throws leaves the database as it was (the unit rolls
    /// back, a claim with it). `binding`: the DPoP key the successor is
    /// bound to when the presented token is bound to none (see `rotate`).
    /// `accessTokenLifetime`: the issuer's, for revoking the access tokens
    /// of a family that reuse revokes (GrantRevocation).
    public func present(_ token: String, clientID: String, lifetime: Int, gracePeriod: Int, binding: String? = nil,
                        accessTokenLifetime: Int = 0,
                        check: (RefreshTokenRecord) throws -> Void = { _ in }) throws -> RefreshRotationOutcome {
        guard !token.isEmpty, token.utf8.count <= 256 else { return .refused("unknown refresh token", .refreshTokenExpired) }
        let hash = SecretHash.of(token)
        return try storage.write { tx in
            let now = clock()
            // RFC 6749 §6: "If a new refresh token is issued, the refresh token
            // scope MUST be identical to that of the refresh token included by
            // the client in the request." The successor keeps the family.
            let successor = SecureRandom.token()
            let sealed = gracePeriod > 0 ? try RefreshSuccessorSealing.seal(Array(successor.utf8), key: sealingKey, spentTokenHash: hash) : nil
            let next = RefreshTokenSuccessor(tokenHash: SecretHash.of(successor), sealed: sealed)
            // The common case first, in one statement: a live token of this
            // client in a live session is spent and this is its successor.
            // RFC 6749 §6 (the server MUST "validate the refresh token" and
            // check it "was issued to the authenticated client") is the
            // claim's WHERE clause; `check` throwing rolls the claim back.
            if let claimed = try tx.refreshTokens.claim(hash, clientID: clientID, successor: next, now: now) {
                try check(claimed)
                var record = RefreshTokenRecord(familyID: claimed.familyID, clientID: claimed.clientID, userID: claimed.userID,
                                                sid: claimed.sid, scope: claimed.scope, authTime: claimed.authTime,
                                                expiresAt: now + Int64(lifetime))
                // RFC 9449 §5: the binding to the client's key stays with the
                // family; and "refresh tokens issued to public clients [in
                // answer to a request with a proof] MUST be bound to the
                // respective public key", so a family issued without DPoP is
                // bound from the first refresh that sends a proof on (a copy
                // of the spent unbound token is reuse, as any other).
                record.dpopJKT = claimed.dpopJKT ?? binding
                try tx.refreshTokens.insert(tokenHash: next.tokenHash, record, createdAt: now)
                return .rotated(successor: successor, record: record)
            }
            // Not claimed: say why, from what is committed (read-only unless
            // it is reuse, which revokes the family).
            // Unknown: never issued, or expired and swept (the likelier).
            guard let presented = try tx.refreshTokens.details(tokenHash: hash) else {
                return .refused("unknown refresh token", .refreshTokenExpired)
            }
            guard presented.clientID.bytesEqual(clientID) else {
                return .refused("the refresh token was issued to another client", .clientChanged)
            }
            // Revoked with its session, or by the app itself, or with a
            // replayed code's family: the session says which.
            guard presented.revokedAt == nil else {
                return .refused("the refresh token was revoked", RefreshRefusal.of(try tx.sessions.listing(sid: presented.sid, now: now)))
            }
            guard presented.expiresAt > now else { return .refused("the refresh token has expired", .refreshTokenExpired) }
            guard try tx.sessions.live(sid: presented.sid, now: now) != nil else {
                return .refused("the sign-in session has ended", RefreshRefusal.of(try tx.sessions.listing(sid: presented.sid, now: now)))
            }
            try check(presented.record)
            // Live yet not claimed: only a change committed between the claim
            // and this read (a revocation and an undo cannot happen); refuse.
            guard presented.usedAt != nil else { return .refused("the refresh token changed while it was presented", .sessionEnded) }
            return try spent(presented, hash: hash, now: now, gracePeriod: gracePeriod, accessTokenLifetime: accessTokenLifetime, tx)
        }
    }

    /// A spent token: its successor again within the grace window while that
    /// successor is unused; otherwise reuse, and the family is revoked.
    func spent(_ presented: RefreshTokenDetails, hash: [UInt8], now: Int64, gracePeriod: Int, accessTokenLifetime: Int,
               _ tx: any IssuerWrites) throws -> RefreshRotationOutcome {
        if let usedAt = presented.usedAt, now - usedAt <= Int64(gracePeriod), let successor = try unusedSuccessor(of: presented, spentHash: hash, tx) {
            return .replayed(successor: successor.token, record: successor.record)
        }
        // RFC 9700 §4.14.2: "If a refresh token is compromised and
        // subsequently used by both the attacker and the legitimate client,
        // one of them will present an invalidated refresh token, which will
        // inform the authorization server of the breach." Revoke the family
        // and its access tokens, and end the session it belongs to (a copy
        // of one token may come with copies of others), telling its apps'
        // backends; this commits.
        try GrantRevocation.revoke(familyID: presented.familyID, accessTokenLifetime: accessTokenLifetime, tx, now: now)
        try SessionBoundCredentials.endSession(presented.record.sid, tx, now: now, reason: .refreshTokenReused)
        return .reuseDetected(familyID: presented.familyID, userID: presented.record.userID)
    }

    /// The spent token's successor when it is still live and unused, opened
    /// from its sealed copy; nil when the window has passed or it was used.
    func unusedSuccessor(of presented: RefreshTokenDetails, spentHash: [UInt8],
                         _ tx: any IssuerWrites) throws -> (token: String, record: RefreshTokenRecord)? {
        guard let sealed = presented.successorSealed, let successorHash = presented.successorHash,
              let successor = try tx.refreshTokens.details(tokenHash: successorHash), successor.usedAt == nil, successor.revokedAt == nil,
              let opened = try? RefreshSuccessorSealing.open(sealed, key: sealingKey, spentTokenHash: spentHash),
              let token = String(validating: opened, as: UTF8.self),
              ConstantTime.equals(SecretHash.of(token), successorHash) else { return nil }
        return (token, successor.record)
    }
}
