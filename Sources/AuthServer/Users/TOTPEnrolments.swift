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
        let sealed = try sealer.seal(secret, userID: userID)
        try storage.write { try $0.totp.enrol(userID: userID, sealedSecret: sealed, at: clock()) }
        return secret
    }

    public func isEnrolled(userID: Int64) throws -> Bool {
        try storage.read.totp.credential(userID: userID) != nil
    }

    public func credential(userID: Int64) throws -> TOTPCredential? {
        guard let stored = try storage.read.totp.credential(userID: userID) else { return nil }
        return TOTPCredential(secret: try sealer.open(stored.sealedSecret, userID: userID), lastUsedStep: stored.lastUsedStep)
    }
}
