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
}

public protocol TOTPStore: TOTPReads {
    /// Enrols `userID` (replacing an earlier seed, whose codes stop working
    /// at once); no step has been used yet.
    func enrol(userID: Int64, sealedSecret: [UInt8], at now: Int64) throws
    /// Records `step` as used. Of concurrent callers with one step exactly
    /// one gets true; false when this step or a later one was accepted
    /// before (RFC 6238 §5.2: one-time use).
    func accept(step: Int64, userID: Int64) throws -> Bool
    /// Deletes `userID`'s seed: the next sign-in asks for the password only,
    /// and a sign-in waiting for a code can no longer complete. False when
    /// there was none.
    func remove(userID: Int64) throws -> Bool
}
