/// A user's TOTP seed as stored: sealed (AES-256-GCM, by the issuer), and
/// the last time step a code was accepted for.
public struct StoredTOTP: Equatable, Sendable {
    public let sealedSecret: [UInt8]
    public let lastUsedStep: Int64
    public init(sealedSecret: [UInt8], lastUsedStep: Int64) {
        self.sealedSecret = sealedSecret
        self.lastUsedStep = lastUsedStep
    }
}

public protocol TOTPReads {
    func credential(userID: Int64) throws -> StoredTOTP?
    /// How many of `userID`'s recovery codes are still unused.
    func recoveryCodesLeft(userID: Int64) throws -> Int
}

public protocol TOTPStore: TOTPReads {
    /// Enrols `userID` (replacing an earlier seed, whose codes stop working
    /// at once); no step has been used yet.
    func enrol(userID: Int64, sealedSecret: [UInt8], at now: Int64) throws
    /// Records `step` as used. Of concurrent callers with one step exactly
    /// one gets true; false when this step or a later one was accepted
    /// before (RFC 6238 §5.2: one-time use).
    func accept(step: Int64, userID: Int64) throws -> Bool
    /// Deletes `userID`'s seed and recovery codes: the next sign-in asks
    /// for the password only, and a sign-in waiting for a code can no
    /// longer complete. False when there was no seed.
    func remove(userID: Int64) throws -> Bool

    /// Replaces `userID`'s recovery codes by `hashes` (SHA-256 of each
    /// code, never the code): the earlier set stops working at once.
    func replaceRecoveryCodes(userID: Int64, hashes: [[UInt8]], at now: Int64) throws
    /// Spends the recovery code whose hash is `hash`: one atomic statement,
    /// so of concurrent callers with one code exactly one gets true; false
    /// when it is not one of `userID`'s unused codes.
    func useRecoveryCode(userID: Int64, hash: [UInt8]) throws -> Bool
}
