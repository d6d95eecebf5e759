/// What a mailed link does. Open (a struct) so a row written by a newer
/// build still reads.
public struct AccountLinkPurpose: RawRepresentable, Hashable, Sendable {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Confirms a sign-up's address.
    public static let verification = Self(rawValue: "verification")
    /// Sets a new password for a forgotten one.
    public static let passwordReset = Self(rawValue: "password_reset")
    /// Sets the first password of an invited account (and verifies it).
    public static let invitation = Self(rawValue: "invitation")
    /// Moves the account to a new address (mailed to that address; the
    /// change counts only when it is used).
    public static let emailChange = Self(rawValue: "email_change")
    /// "It wasn't me": mailed to the old address when the address changed;
    /// moves the account back and sets a new password.
    public static let emailRevert = Self(rawValue: "email_revert")
}

/// A link to store: the SHA-256 of its token (the token itself is only in
/// the mail), what it is for, whose, and until when.
public struct NewAccountLink: Equatable, Sendable {
    public let tokenHash: [UInt8]
    public let purpose: AccountLinkPurpose
    public let userID: Int64
    public let createdAt: Int64
    public let expiresAt: Int64
    /// The pending sign-in the journey began from, for a verification link
    /// that continues it in the same browser; nil for none.
    public let pendingRequest: String?
    /// The address the link moves the account to (the new one for an
    /// email change, the old one for a revert); nil for other purposes.
    public let targetEmail: String?

    public init(tokenHash: [UInt8], purpose: AccountLinkPurpose, userID: Int64, createdAt: Int64, expiresAt: Int64,
                pendingRequest: String? = nil, targetEmail: String? = nil) {
        self.tokenHash = tokenHash
        self.purpose = purpose
        self.userID = userID
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.pendingRequest = pendingRequest
        self.targetEmail = targetEmail
    }
}

/// A live link as read or redeemed.
public struct AccountLink: Equatable, Sendable {
    public let purpose: AccountLinkPurpose
    public let userID: Int64
    public let expiresAt: Int64
    public let pendingRequest: String?
    public let targetEmail: String?

    public init(purpose: AccountLinkPurpose, userID: Int64, expiresAt: Int64, pendingRequest: String?, targetEmail: String? = nil) {
        self.purpose = purpose
        self.userID = userID
        self.expiresAt = expiresAt
        self.pendingRequest = pendingRequest
        self.targetEmail = targetEmail
    }
}

/// Reading a link without using it: the page a link opens shows a button
/// first (mail scanners open links; only the button's POST redeems).
///
/// Links are found by the SHA-256 of their token through the primary key:
/// the database compares hashes of 128-bit random tokens, so how long a
/// comparison takes tells nothing about a token (the same reasoning as the
/// refresh tokens' lookup).
public protocol AccountLinkReads {
    /// The link whose token hashes to `tokenHash`, when it is for `purpose`,
    /// unused, unvoided and `now` is before its expiry; nil otherwise.
    func live(tokenHash: [UInt8], purpose: AccountLinkPurpose, now: Int64) throws -> AccountLink?
}

/// The mailed links (verification 24 h, password reset 30 min, invitation
/// 7 days: the issuer chooses `expiresAt`).
public protocol AccountLinkStore: AccountLinkReads {
    /// Stores `link`. With `voidingEarlier`, every other unused link of the
    /// same user and purpose is voided first, in the same write unit (a
    /// newer reset link voids older ones).
    func issue(_ link: NewAccountLink, voidingEarlier: Bool) throws

    /// Uses the link: one conditional `UPDATE … WHERE used_at IS NULL AND
    /// expires_at > now … RETURNING`, so of concurrent callers exactly one
    /// gets the link and the others nil; an expired, voided, used, unknown
    /// or other-purpose token gets nil and changes nothing.
    func redeem(tokenHash: [UInt8], purpose: AccountLinkPurpose, now: Int64) throws -> AccountLink?

    /// Voids every unused link of `userID` for `purpose` (a reset done
    /// voids the other reset links); returns how many.
    @discardableResult
    func voidAll(userID: Int64, purpose: AccountLinkPurpose, now: Int64) throws -> Int
}
