import IssuerStorage
import SSOCore

/// A user's TOTP seed, opened, and the last time step a code was accepted for.
public struct TOTPCredential: Equatable, Sendable {
    public let secret: [UInt8]
    public let lastUsedStep: Int64
}

/// TOTP enrolments: one seed per user, sealed before it is stored.
public final class TOTPEnrolments {
    let storage: any IssuerStorage
    let sealer: TOTPSecretSealer
    let clock: Clock

    public init(storage: any IssuerStorage, sealer: TOTPSecretSealer, clock: @escaping Clock = systemClock) {
        self.storage = storage
        self.sealer = sealer
        self.clock = clock
    }

    /// Enrols `userID` with a fresh random seed, replacing any earlier one
    /// (whose codes stop working at once); returns the seed to show once.
    public func enrol(userID: Int64) throws -> [UInt8] {
        let secret = SecureRandom.bytes(TOTP.secretByteCount)
        try enrol(userID: userID, secret: secret)
        return secret
    }

    /// Enrols `userID` with `secret` (one the user's app already shows:
    /// /account's confirmed enrolment), replacing any earlier one. With
    /// `usedStep`, the code that confirmed it counts as used: it cannot
    /// sign in (RFC 6238 §5.2, one-time use).
    public func enrol(userID: Int64, secret: [UInt8], usedStep: Int64? = nil) throws {
        precondition(secret.count == TOTP.secretByteCount, "a TOTP seed is TOTP.secretByteCount bytes")
        let sealed = try sealer.seal(secret, userID: userID)
        try storage.write { tx in
            try tx.totp.enrol(userID: userID, sealedSecret: sealed, at: clock())
            if let usedStep { _ = try tx.totp.accept(step: usedStep, userID: userID) }
        }
    }

    public func isEnrolled(userID: Int64) throws -> Bool {
        try storage.read.totp.credential(userID: userID) != nil
    }

    public func credential(userID: Int64) throws -> TOTPCredential? {
        guard let stored = try storage.read.totp.credential(userID: userID) else { return nil }
        return TOTPCredential(secret: try sealer.open(stored.sealedSecret, userID: userID), lastUsedStep: stored.lastUsedStep)
    }
}
