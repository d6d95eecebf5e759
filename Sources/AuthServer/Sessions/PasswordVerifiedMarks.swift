import IssuerStorage
import SSOCore

/// The first factor of a two-step sign-in, remembered on the pending
/// authorization itself: the password of `userID` was right at a given
/// time. The TOTP step trusts nothing the form says about who is signing
/// in; it reads this mark, which only the browser holding the pending
/// request's cookie can reach.
public final class PasswordVerifiedMarks {
    /// How long the TOTP step may follow the password step.
    public static let lifetime: Int64 = 300
    let storage: any IssuerStorage
    let clock: Clock

    public init(storage: any IssuerStorage, clock: @escaping Clock = systemClock) {
        self.storage = storage
        self.clock = clock
    }

    /// Marks the live pending request behind `cookieSecret`; false when it is gone.
    public func mark(cookieSecret: String, userID: Int64) throws -> Bool {
        try storage.write { try $0.pendingAuthorizations.mark(secretHash: SecretHash.of(cookieSecret), userID: userID, now: clock()) }
    }

    /// The user whose password was verified for this pending request within
    /// `lifetime`; nil when there is no such mark or it is stale.
    public func verifiedUserID(cookieSecret: String) throws -> Int64? {
        let now = clock()
        return try storage.read.pendingAuthorizations.markedUserID(secretHash: SecretHash.of(cookieSecret), now: now,
                                                                   markedAfter: now - Self.lifetime)
    }

    /// Consumes the pending request, in the caller's write unit, only if it
    /// still carries a fresh mark for `userID`.
    public func consume(cookieSecret: String, userID: Int64, _ tx: any IssuerWrites) throws -> PendingAuthorization? {
        let now = clock()
        return try tx.pendingAuthorizations.consumeMarked(secretHash: SecretHash.of(cookieSecret), userID: userID, now: now,
                                                          markedAfter: now - Self.lifetime)
    }
}
