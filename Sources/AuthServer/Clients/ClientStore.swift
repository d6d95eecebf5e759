import FoundationEssentials
import SSOCore

public struct Client: Equatable, Sendable {
    public let clientID: String
    public let isConfidential: Bool
    public let secretHash: String?
    public let scopes: [String]
    public let nativeSSOGroup: String?
    public let redirectURIs: [String]
    public let postLogoutRedirectURIs: [String]
}

public final class ClientStore {
    let database: SQLiteDatabase
    let hasher: PasswordHasher
    let clock: Clock

    public init(database: SQLiteDatabase, hasher: PasswordHasher = PasswordHasher(), clock: @escaping Clock = systemClock) {
        self.database = database
        self.hasher = hasher
        self.clock = clock
    }

    @discardableResult
    public func add(clientID: String, redirectURIs: [String], postLogoutRedirectURIs: [String] = [], scopes: [String],
                    nativeSSOGroup: String? = nil, secret: String? = nil) throws -> Client {
        try Self.validate(clientID: clientID)
        guard !redirectURIs.isEmpty else { throw ValidationError("a client needs at least one --redirect-uri") }
        for uri in redirectURIs + postLogoutRedirectURIs { try RedirectURIRules.validateForRegistration(uri) }
        let scopes = scopes.isEmpty ? ["openid"] : scopes
        for scope in scopes { try Self.validate(scope: scope) }
        if let nativeSSOGroup { try Self.validate(clientID: nativeSSOGroup, what: "native SSO group") }
        if let secret, secret.count < 16 { throw ValidationError("a client secret must have at least 16 characters") }
        guard try find(clientID: clientID) == nil else { throw ValidationError("client \(clientID) already exists") }
        let secretHash = try secret.map { try hasher.hash(password: $0) }
        try database.transaction {
            try database.execute("""
                INSERT INTO clients (client_id, secret_hash, scopes, native_sso_group, created_at) VALUES (?, ?, ?, ?, ?)
                """, [.text(clientID), SQLiteValue(secretHash), .text(scopes.joined(separator: " ")), SQLiteValue(nativeSSOGroup), .integer(clock())])
            for uri in Set(redirectURIs) {
                try database.execute("INSERT INTO client_redirect_uris (client_id, kind, uri) VALUES (?, 'login', ?)", [.text(clientID), .text(uri)])
            }
            for uri in Set(postLogoutRedirectURIs) {
                try database.execute("INSERT INTO client_redirect_uris (client_id, kind, uri) VALUES (?, 'post_logout', ?)", [.text(clientID), .text(uri)])
            }
        }
        guard let client = try find(clientID: clientID) else { throw ValidationError("client \(clientID) vanished after insert") }
        return client
    }

    public func find(clientID: String) throws -> Client? {
        guard let row = try database.queryOne("SELECT client_id, secret_hash, scopes, native_sso_group FROM clients WHERE client_id = ?",
                                              [.text(clientID)]) else { return nil }
        let uris = try database.query("SELECT kind, uri FROM client_redirect_uris WHERE client_id = ? ORDER BY uri", [.text(clientID)])
        return Client(clientID: row.string(0), isConfidential: row.optionalString(1) != nil, secretHash: row.optionalString(1),
                      scopes: row.string(2).split(separator: " ").map(String.init), nativeSSOGroup: row.optionalString(3),
                      redirectURIs: uris.filter { $0.string(0) == "login" }.map { $0.string(1) },
                      postLogoutRedirectURIs: uris.filter { $0.string(0) == "post_logout" }.map { $0.string(1) })
    }

    public func list() throws -> [Client] {
        try database.query("SELECT client_id FROM clients ORDER BY client_id").compactMap { try find(clientID: $0.string(0)) }
    }

    static func validate(clientID: String, what: String = "client id") throws {
        guard (1...64).contains(clientID.utf8.count),
              clientID.unicodeScalars.allSatisfy({ ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || "-._".unicodeScalars.contains($0) })
        else { throw ValidationError("a \(what) is 1 to 64 letters, digits, '-', '.' or '_': \(clientID.debugDescription)") }
    }

    /// RFC 6749 §3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ).
    static func validate(scope: String) throws {
        guard ScopeParameter.isScopeToken(scope) else { throw ValidationError("not a valid scope token (RFC 6749 §3.3): \(scope.debugDescription)") }
    }
}
