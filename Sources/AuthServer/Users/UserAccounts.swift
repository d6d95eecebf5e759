import IssuerStorage
import SSOCore

/// User accounts: the rules an account must meet, over the user store.
public final class UserAccounts {
    let storage: any IssuerStorage
    let hasher: PasswordHasher
    let clock: Clock

    public init(storage: any IssuerStorage, hasher: PasswordHasher = PasswordHasher(), clock: @escaping Clock = systemClock) {
        self.storage = storage
        self.hasher = hasher
        self.clock = clock
    }

    @discardableResult
    public func add(email: String, name: String, password: String, roles: [String] = ["user"]) throws -> User {
        try Self.validate(email: email)
        try Self.validate(name: name)
        try Self.validate(password: password, email: email)
        try Self.validate(roles: roles)
        let hash = try hasher.hash(password: password)
        return try storage.write { tx in
            // Serialized, so two concurrent adds of one address meet a
            // conflict here, not the unique key's error.
            try tx.serializeAdministrativeChanges()
            guard try tx.users.find(email: email) == nil else { throw ValidationError.conflict("a user with email \(email) already exists") }
            return try tx.users.insert(NewUser(subject: SecureRandom.token(byteCount: 16), email: email, name: name, passwordHash: hash,
                                               roles: roles, createdAt: clock()))
        }
    }

    public func find(email: String) throws -> User? { try storage.read.users.find(email: email) }

    /// The account `email` names, for a change an administrator asked for.
    /// Identifiers are bytes: an address with a control character is
    /// refused before any lookup (one byte of them once split an account
    /// in two); an unknown one is refused by name.
    public func existing(email: String) throws -> User {
        try Self.existing(email: email, in: storage.read.users)
    }

    /// `existing(email:)` in `users`: a write unit's store, so the account
    /// is found and changed in one transaction.
    static func existing(email: String, in users: any UserReads) throws -> User {
        if FormParameters.firstControlCharacter(in: email) != nil {
            throw ValidationError("the email \(email.debugDescription) contains a control character")
        }
        guard let user = try users.find(email: email) else { throw ValidationError.notFound("no user with email \(email)") }
        return user
    }
    public func find(id: Int64) throws -> User? { try storage.read.users.find(id: id) }
    public func find(subject: String) throws -> User? { try storage.read.users.find(subject: subject) }
    public func list() throws -> [User] { try storage.read.users.list() }

    /// Hashes a new password for the account `email` after checking the
    /// password rules; slow (scrypt), so it runs before any write unit is
    /// opened.
    func newPasswordHash(_ password: String, email: String) throws -> String {
        try Self.validate(password: password, email: email)
        return try hasher.hash(password: password)
    }

    /// A practical address check (one `@`, a dotted domain, no spaces or
    /// control characters, at most 254 bytes as RFC 5321 §4.5.3.1.3 allows).
    static func validate(email: String) throws {
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        guard email.utf8.count <= 254, parts.count == 2, !parts[0].isEmpty, parts[1].contains("."),
              !parts[1].hasPrefix("."), !parts[1].hasSuffix("."),
              email.unicodeScalars.allSatisfy({ $0.value > 32 && $0.value != 127 && !(0x80...0x9F).contains($0.value)
                  && !"<>\"',;\\()[]".unicodeScalars.contains($0) })
        else { throw ValidationError("not a valid email address: \(email.debugDescription)") }
    }

    static func validate(name: String) throws {
        guard !name.unicodeScalars.allSatisfy(\.properties.isWhitespace), name.utf8.count <= 200,
              name.unicodeScalars.allSatisfy({ $0.value >= 32 && $0.value != 127 && !(0x80...0x9F).contains($0.value) })
        else { throw ValidationError("the name must be 1 to 200 printable characters") }
    }

    /// PasswordPolicy's rules: a PasswordRefusal, which `ssoctl` prints
    /// (exit 1) and the forms show by its message key.
    static func validate(password: String, email: String) throws {
        try PasswordPolicy.check(password, email: email)
    }

    static func validate(roles: [String]) throws {
        guard !roles.isEmpty else { throw ValidationError("a user has at least one role") }
        for (index, role) in roles.enumerated() {
            try validate(role: role)
            if roles[..<index].containsBytes(role) { throw ValidationError("the role \(role.debugDescription) is given twice") }
        }
    }

    static func validate(role: String) throws {
        guard !role.isEmpty, role.utf8.count <= 64,
              role.unicodeScalars.allSatisfy({ ($0.isASCII && ($0.properties.isAlphabetic || $0.properties.numericType != nil)) || "-_.:".unicodeScalars.contains($0) })
        else { throw ValidationError("a role is 1 to 64 letters, digits, '-', '_', '.' or ':': \(role.debugDescription)") }
    }
}
