/// A passkey (a WebAuthn public key credential, WebAuthn Level 3 §4) as
/// stored: by its credential id, which is bytes (never text: it may hold any
/// byte, NUL and 0xFF included), for one user.
public struct PasskeyRecord: Equatable, Sendable {
    /// 1…1023 bytes (WebAuthn §5.1: at most 1023); the primary key.
    public var credentialID: [UInt8]
    public var userID: Int64
    /// The credential public key, COSE_Key encoded (RFC 9052 §7).
    public var publicKeyCOSE: [UInt8]
    /// The COSE algorithm: -7 (ES256), -8 (EdDSA), -257 (RS256).
    public var algorithm: Int
    public var signCount: Int64
    /// Shown on /account; at most 64 characters, enforced by callers.
    public var name: String
    /// The authenticator's AAGUID, 16 bytes.
    public var aaguid: [UInt8]
    /// The BE flag at registration: the credential may be synced.
    public var backupEligible: Bool
    /// The BS flag as last seen: the credential is synced now.
    public var backupState: Bool
    /// Hints for the browser (AuthenticatorTransport: "usb", "nfc", "ble",
    /// "internal", "hybrid", …), in the order given.
    public var transports: [String]
    public var createdAt: Int64
    public var lastUsedAt: Int64?

    public init(credentialID: [UInt8], userID: Int64, publicKeyCOSE: [UInt8], algorithm: Int, signCount: Int64, name: String,
                aaguid: [UInt8], backupEligible: Bool, backupState: Bool, transports: [String], createdAt: Int64,
                lastUsedAt: Int64? = nil) {
        self.credentialID = credentialID
        self.userID = userID
        self.publicKeyCOSE = publicKeyCOSE
        self.algorithm = algorithm
        self.signCount = signCount
        self.name = name
        self.aaguid = aaguid
        self.backupEligible = backupEligible
        self.backupState = backupState
        self.transports = transports
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
    }
}

public protocol PasskeyReads {
    /// The passkey with exactly these credential id bytes, whoever it belongs to.
    func find(credentialID: [UInt8]) throws -> PasskeyRecord?
    /// `userID`'s passkeys, oldest first.
    func list(userID: Int64) throws -> [PasskeyRecord]
}

public protocol PasskeyStore: PasskeyReads {
    /// Registers `passkey`; false, and nothing changed, when the credential
    /// id is already registered (to anyone).
    func add(_ passkey: PasskeyRecord) throws -> Bool
    /// One atomic statement: records a use with `signCount` (and the
    /// assertion's `backupState`, `now` as the last use) if it is greater
    /// than the stored count, or both are 0 (WebAuthn §6.1.1: an
    /// authenticator without a counter always sends 0); false, and nothing
    /// changed, otherwise (a counter that did not grow: a possible clone, or
    /// a replayed assertion) or for an unknown credential. Of concurrent
    /// callers presenting the same non-zero count exactly one gets true (a
    /// replayed assertion never wins twice); with 0/0 every use wins, and
    /// the single-use challenge is what refuses a replay.
    func recordUse(credentialID: [UInt8], signCount: Int64, backupState: Bool, now: Int64) throws -> Bool
    /// Renames `userID`'s passkey; false, and nothing changed, when the
    /// credential is unknown or another user's.
    func rename(credentialID: [UInt8], userID: Int64, name: String) throws -> Bool
    /// Deletes `userID`'s passkey; false, and nothing changed, when the
    /// credential is unknown or another user's.
    func remove(credentialID: [UInt8], userID: Int64) throws -> Bool
    /// Deletes every passkey of `userID` (account erasure); how many.
    func removeAll(userID: Int64) throws -> Int
}

/// What a WebAuthn challenge was issued for: the ceremony (`purpose`, e.g.
/// registration or sign-in), the user it was issued to (nil for a
/// discoverable sign-in, where the credential names the user), and opaque
/// bytes the caller binds it to (a pending sign-in, a session), until it
/// expires.
public struct WebAuthnChallengeRecord: Equatable, Sendable {
    public var purpose: String
    public var userID: Int64?
    public var binding: [UInt8]?
    public var expiresAt: Int64

    public init(purpose: String, userID: Int64?, binding: [UInt8]?, expiresAt: Int64) {
        self.purpose = purpose
        self.userID = userID
        self.binding = binding
        self.expiresAt = expiresAt
    }
}

/// The WebAuthn challenges the issuer handed out (WebAuthn §13.4.3: a
/// challenge is random, and used once), shared by every responder process
/// and node; the sweep deletes them once expired or used. Reachable only
/// inside write units.
public protocol WebAuthnChallengeStore {
    /// Stored by SHA-256 of the challenge (callers pass the hash, 32 bytes;
    /// never the challenge itself).
    func issue(challengeHash: [UInt8], _ record: WebAuthnChallengeRecord) throws
    /// Single use, one atomic statement (`UPDATE … WHERE used_at IS NULL AND
    /// expires_at > now AND purpose = … RETURNING …`): the record if the
    /// challenge was issued for `purpose` (compared as bytes), is unexpired
    /// and unused, marking it used; nil otherwise, changing nothing. Of
    /// concurrent claims exactly one wins.
    func claim(challengeHash: [UInt8], purpose: String, now: Int64) throws -> WebAuthnChallengeRecord?
}
