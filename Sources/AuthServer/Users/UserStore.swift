import FoundationEssentials
import SSOCore

public struct User: Equatable, Sendable {
    public let id: Int64
    public let subject: String
    public let email: String
    public let name: String
    public let passwordHash: String
    public let roles: [String]
    public let disabled: Bool
}

/// A refusal ssoctl (or a responder) reports as is: it names the problem
/// and leaves the database unchanged.
public struct ValidationError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

public final class UserStore {
    let database: SQLiteDatabase
    let hasher: PasswordHasher
    let clock: Clock

    public init(database: SQLiteDatabase, hasher: PasswordHasher = PasswordHasher(), clock: @escaping Clock = systemClock) {
        self.database = database
        self.hasher = hasher
        self.clock = clock
    }

    @discardableResult
    public func add(email: String, name: String, password: String, roles: [String] = ["user"]) throws -> User {
        try Self.validate(email: email)
        try Self.validate(name: name)
        try Self.validate(password: password)
        for role in roles { try Self.validate(role: role) }
        guard try find(email: email) == nil else { throw ValidationError("a user with email \(email) already exists") }
        let subject = SecureRandom.token(byteCount: 16)
        let hash = try hasher.hash(password: password)
        try database.execute("""
            INSERT INTO users (subject, email, name, password_hash, roles, created_at) VALUES (?, ?, ?, ?, ?, ?)
            """, [.text(subject), .text(email), .text(name), .text(hash), .text(roles.joined(separator: " ")), .integer(clock())])
        guard let user = try find(email: email) else { throw ValidationError("user \(email) vanished after insert") }
        return user
    }

    public func find(email: String) throws -> User? {
        try database.queryOne("""
            SELECT id, subject, email, name, password_hash, roles, disabled FROM users WHERE email = ?
            """, [.text(email)]).map(Self.user)
    }

    public func find(id: Int64) throws -> User? {
        try database.queryOne("""
            SELECT id, subject, email, name, password_hash, roles, disabled FROM users WHERE id = ?
            """, [.integer(id)]).map(Self.user)
    }

    public func find(subject: String) throws -> User? {
        try database.queryOne("""
            SELECT id, subject, email, name, password_hash, roles, disabled FROM users WHERE subject = ?
            """, [.text(subject)]).map(Self.user)
    }

    public func list() throws -> [User] {
        try database.query("SELECT id, subject, email, name, password_hash, roles, disabled FROM users ORDER BY email").map(Self.user)
    }

    /// Store-level only: callers use AccountChanges, which also ends the sessions.
    func setPassword(email: String, password: String) throws {
        try Self.validate(password: password)
        guard try find(email: email) != nil else { throw ValidationError("no user with email \(email)") }
        let hash = try hasher.hash(password: password)
        try database.execute("UPDATE users SET password_hash = ? WHERE email = ?", [.text(hash), .text(email)])
    }

    /// Store-level only: callers use AccountChanges, which also ends the sessions.
    func disable(email: String) throws {
        guard try database.execute("UPDATE users SET disabled = 1 WHERE email = ?", [.text(email)]) == 1 else {
            throw ValidationError("no user with email \(email)")
        }
    }

    static func user(_ row: SQLiteRow) -> User {
        User(id: row.int(0), subject: row.string(1), email: row.string(2), name: row.string(3), passwordHash: row.string(4),
             roles: row.string(5).split(separator: " ").map(String.init), disabled: row.int(6) != 0)
    }

    /// A practical address check (one `@`, a dotted domain, no spaces or
    /// control characters, at most 254 bytes as RFC 5321 §4.5.3.1.3 allows).
    static func validate(email: String) throws {
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        guard email.utf8.count <= 254, parts.count == 2, !parts[0].isEmpty, parts[1].contains("."),
              !parts[1].hasPrefix("."), !parts[1].hasSuffix("."),
              email.unicodeScalars.allSatisfy({ $0.value > 32 && $0.value != 127 && !"<>\"',;\\()[]".unicodeScalars.contains($0) })
        else { throw ValidationError("not a valid email address: \(email.debugDescription)") }
    }

    static func validate(name: String) throws {
        guard !name.unicodeScalars.allSatisfy(\.properties.isWhitespace), name.utf8.count <= 200,
              name.unicodeScalars.allSatisfy({ $0.value >= 32 && $0.value != 127 })
        else { throw ValidationError("the name must be 1 to 200 printable characters") }
    }

    /// NIST SP 800-63B §5.1.1.2: at least 8 characters; a generous upper
    /// bound keeps one login from hashing megabytes.
    static func validate(password: String) throws {
        guard password.count >= 8 else { throw ValidationError("the password must have at least 8 characters") }
        guard password.utf8.count <= 1024 else { throw ValidationError("the password must be at most 1024 bytes") }
    }

    static func validate(role: String) throws {
        guard !role.isEmpty, role.utf8.count <= 64,
              role.unicodeScalars.allSatisfy({ ($0.isASCII && ($0.properties.isAlphabetic || $0.properties.numericType != nil)) || "-_.:".unicodeScalars.contains($0) })
        else { throw ValidationError("a role is 1 to 64 letters, digits, '-', '_', '.' or ':': \(role.debugDescription)") }
    }
}

// MARK: Account changes (AccountChanges runs these inside its transaction)

extension UserStore {
    /// Hashes a new password after checking the password rules; slow
    /// (scrypt), so it runs before any transaction is opened.
    func newPasswordHash(_ password: String) throws -> String {
        try Self.validate(password: password)
        return try hasher.hash(password: password)
    }

    /// Stores a password hash; no transaction of its own.
    func storePasswordHash(_ hash: String, userID: Int64) throws {
        try database.execute("UPDATE users SET password_hash = ? WHERE id = ?", [.text(hash), .integer(userID)])
    }

    /// Marks a user disabled; no transaction of its own.
    func storeDisabled(userID: Int64) throws {
        try database.execute("UPDATE users SET disabled = 1 WHERE id = ?", [.integer(userID)])
    }
}
