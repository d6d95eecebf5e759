import IssuerStorage
import SSOCore

/// The changes a signed-in user makes to their own account at /account,
/// each in one write unit with what it must settle: the current password's
/// throttle attempt, the sessions it ends and what is bound to them. The
/// account endpoints call these and never open a write unit themselves.
public final class AccountSelfService {
    let storage: any IssuerStorage
    let throttle: LoginThrottle
    let hasher: PasswordHasher
    let clock: Clock

    public init(storage: any IssuerStorage, throttle: LoginThrottle, hasher: PasswordHasher, clock: @escaping Clock) {
        self.storage = storage
        self.throttle = throttle
        self.hasher = hasher
        self.clock = clock
    }

    /// What the throttled current-password check found.
    public enum CurrentPassword {
        /// Right: settle `attempt` (`settle`, or the change that takes it) once the change is made.
        case verified(LoginAttempt)
        /// Wrong: counted as a failed sign-in.
        case wrong
        /// Locked (nothing counted, the password not checked); `detail` is for the log.
        case locked(detail: String)
    }

    /// The current password, required before a change a browser left
    /// signed in must not be enough for (a new password, adding a passkey,
    /// setting up or removing TOTP). It goes through the login throttle,
    /// per account and per address, like a sign-in: guessing it here costs
    /// what guessing it at /login does.
    public func checkCurrentPassword(_ current: String, of user: User, address: String) throws -> CurrentPassword {
        switch try throttle.admit(.user(id: user.id), address: address) {
        case .locked(let retryAfter, let key): return .locked(detail: "\(key.rawValue) locked for \(retryAfter) s (user \(user.id))")
        case .admitted(let attempt): return hasher.verify(password: current, against: user.passwordHash) ? .verified(attempt) : .wrong
        }
    }

    /// A right current password's attempt, settled (the failure counters
    /// of the account and the address cleared, as a sign-in clears them).
    public func settle(_ attempt: LoginAttempt) throws {
        try storage.write { tx in try throttle.succeeded(attempt, tx) }
    }

    /// Renames one of `userID`'s passkeys; false when it has none by that id.
    public func renamePasskey(credentialID: [UInt8], userID: Int64, name: String) throws -> Bool {
        try storage.write { tx in try tx.passkeys.rename(credentialID: credentialID, userID: userID, name: name) }
    }

    /// Removes one of `userID`'s passkeys; false when it has none by that id.
    public func removePasskey(credentialID: [UInt8], userID: Int64) throws -> Bool {
        try storage.write { tx in try tx.passkeys.remove(credentialID: credentialID, userID: userID) }
    }

    public func passkeys(userID: Int64) throws -> [PasskeyRecord] {
        try storage.read.passkeys.list(userID: userID)
    }

    /// Removes the account's TOTP once the current password was right,
    /// settling its attempt (when the check took one) in the same write
    /// unit; false when there was none.
    public func removeTOTP(userID: Int64, settling attempt: LoginAttempt?) throws -> Bool {
        try storage.write { tx in
            if let attempt { try throttle.succeeded(attempt, tx) }
            return try tx.totp.remove(userID: userID)
        }
    }

    /// Ends one of `userID`'s live sessions with everything bound to it;
    /// false when `sid` is not a live session of theirs (whose it is is
    /// read in the write unit that ends it).
    public func endOwnSession(sid: String, userID: Int64) throws -> Bool {
        let now = clock()
        return try storage.write { tx -> Bool in
            guard let session = try tx.sessions.live(sid: sid, now: now), session.userID == userID else { return false }
            try SessionBoundCredentials.endSession(session.sid, tx, now: now)
            return true
        }
    }

    /// "Sign out everywhere": every session of the user ends, with every
    /// refresh token and device secret bound to one; the sids ended.
    public func endEverySession(userID: Int64) throws -> [String] {
        let now = clock()
        return try storage.write { tx in try SessionBoundCredentials.endEverySession(userID: userID, tx, now: now) }
    }
}
