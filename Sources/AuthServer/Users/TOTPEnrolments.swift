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
    ///
    /// With `recoveryCodes`, those codes replace the account's earlier set
    /// in the same write unit (the enrolment and its way back in exist
    /// together or not at all).
    public func enrol(userID: Int64, secret: [UInt8], usedStep: Int64? = nil, recoveryCodes: [String]? = nil) throws {
        precondition(secret.count == TOTP.secretByteCount, "a TOTP seed is TOTP.secretByteCount bytes")
        let sealed = try sealer.seal(secret, userID: userID)
        let hashes = recoveryCodes.map(Self.hashes)
        try storage.write { tx in
            try tx.totp.enrol(userID: userID, sealedSecret: sealed, at: clock())
            if let usedStep { _ = try tx.totp.accept(step: usedStep, userID: userID) }
            if let hashes { try tx.totp.replaceRecoveryCodes(userID: userID, hashes: hashes, at: clock()) }
        }
    }

    /// A new set of recovery codes for an enrolled account, replacing the
    /// earlier set; nil (nothing changed) when the account has no TOTP.
    public func newRecoveryCodes(userID: Int64) throws -> [String]? {
        let codes = RecoveryCodes.generate(), hashes = Self.hashes(codes)
        return try storage.write { tx in
            guard try tx.totp.credential(userID: userID) != nil else { return nil }
            try tx.totp.replaceRecoveryCodes(userID: userID, hashes: hashes, at: clock())
            return codes
        }
    }

    public func recoveryCodesLeft(userID: Int64) throws -> Int {
        try storage.read.totp.recoveryCodesLeft(userID: userID)
    }

    static func hashes(_ codes: [String]) -> [[UInt8]] {
        codes.map { code in
            guard let hash = RecoveryCodes.hash(code) else { preconditionFailure("RecoveryCodes.hash reads every code generate() makes") }
            return hash
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
