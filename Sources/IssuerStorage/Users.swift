/// A user account.
public struct User: Equatable, Sendable {
    public let id: Int64
    /// The OIDC `sub`: random, stable, never reassigned.
    public let subject: String
    public let email: String
    public let name: String
    /// scrypt, with its parameters (PasswordHasher's format).
    public let passwordHash: String
    public let roles: [String]
    public let disabled: Bool
    /// Whether the address is known to reach this person: true for accounts
    /// an administrator made (`ssoctl user add`), an invitation's once its
    /// link is used, and a sign-up's once its verification link is; false
    /// for a sign-up until then. ID tokens and userinfo carry it as it is.
    public let emailVerified: Bool

    public init(id: Int64, subject: String, email: String, name: String, passwordHash: String, roles: [String], disabled: Bool,
                emailVerified: Bool = true) {
        self.id = id
        self.subject = subject
        self.email = email
        self.name = name
        self.passwordHash = passwordHash
        self.roles = roles
        self.disabled = disabled
        self.emailVerified = emailVerified
    }

    /// An invited account has no password until its invitation is used:
    /// the stored hash is empty, which no password verifies.
    public var hasPassword: Bool { !passwordHash.isEmpty }
}

/// A user to insert (the id is the database's).
public struct NewUser: Equatable, Sendable {
    public let subject: String
    public let email: String
    public let name: String
    public let passwordHash: String
    public let roles: [String]
    public let createdAt: Int64
    /// False only for a sign-up, until its verification link is used.
    public let emailVerified: Bool

    public init(subject: String, email: String, name: String, passwordHash: String, roles: [String], createdAt: Int64,
                emailVerified: Bool = true) {
        self.subject = subject
        self.email = email
        self.name = name
        self.passwordHash = passwordHash
        self.roles = roles
        self.createdAt = createdAt
        self.emailVerified = emailVerified
    }
}

public protocol UserReads {
    /// The user whose email equals `email` with ASCII letters folded to
    /// lower case (and nothing else folded: identifiers are bytes).
    func find(email: String) throws -> User?
    func find(id: Int64) throws -> User?
    func find(subject: String) throws -> User?
    /// Every user, by email.
    func list() throws -> [User]
    /// Up to `limit` users whose id is above `afterID`, by id (the order
    /// they were made in): one page of a walk that resumes where the last
    /// page ended, so a user added meanwhile never shifts a page and no
    /// user is seen twice. One indexed range read, whatever the table's size.
    func page(afterID: Int64, limit: Int) throws -> [User]
}

public protocol UserStore: UserReads {
    /// Inserts a user; the caller has checked that the email is free in the
    /// same write unit (a unique key still refuses a concurrent duplicate).
    func insert(_ user: NewUser) throws -> User
    func setPasswordHash(_ hash: String, userID: Int64) throws
    func setDisabled(_ disabled: Bool, userID: Int64) throws
    /// Marks `userID`'s address verified; true when it was not before (one
    /// statement: of concurrent callers exactly one sees the change).
    func markEmailVerified(userID: Int64) throws -> Bool
    /// Sets the name, the roles, or both of `userID` (nil keeps the stored
    /// value) and returns the user as it now is; nil, and nothing changed,
    /// when there is no such user.
    func update(name: String?, roles: [String]?, userID: Int64) throws -> User?
    /// Moves `userID` to `email`, which counts as verified (only a used
    /// link moves an account), and returns the user as it now is; nil, and
    /// nothing changed, when there is no such user. The caller has checked
    /// that the address is free in the same write unit, as for `insert`.
    func changeEmail(_ email: String, userID: Int64) throws -> User?
    /// Deletes the user row (its TOTP credential goes with it) and says
    /// whether there was one. Sessions reference the user, so they must be
    /// deleted first in the same write unit (a remaining one makes this
    /// throw); rows that name the user without a reference (tokens, codes,
    /// device secrets, pending requests, the throttle counter) are the
    /// caller's to delete too: the issuer's AccountChanges.delete does all of it.
    func delete(userID: Int64) throws -> Bool
}

/// The ASCII-only case folding the email lookup uses, in one place, so both
/// backends and the login throttle agree on which spellings are one address.
public enum EmailKey {
    public static func of(_ email: String) -> String {
        String(decoding: email.utf8.map { (0x41...0x5A).contains($0) ? $0 | 0x20 : $0 }, as: UTF8.self)
    }
}
