import IssuerStorage
import SSOCore

/// Registered clients: the rules a registration must meet, over the client
/// store, and a cache of the clients this process has looked up.
///
/// Every request names a client, and clients change rarely: the cache is
/// dropped whenever the storage's change marker moves (any commit by
/// another connection on SQLite; an announced change on PostgreSQL) or
/// this process writes one. Only clients that exist are kept, so a flood
/// of made-up client ids cannot grow it; it is keyed by the id's bytes,
/// never by Swift string equality (which would let "\u{212A}" find "K").
public final class ClientRegistry {
    let storage: any IssuerStorage
    let hasher: PasswordHasher
    let clock: Clock
    private var cached: [[UInt8]: Client] = [:]
    private var cachedAt: Int64?

    public init(storage: any IssuerStorage, hasher: PasswordHasher = PasswordHasher(), clock: @escaping Clock = systemClock) {
        self.storage = storage
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
        let secretHash = try secret.map { try hasher.hash(password: $0) }
        let client = Client(clientID: clientID, secretHash: secretHash, scopes: scopes, nativeSSOGroup: nativeSSOGroup,
                            redirectURIs: redirectURIs, postLogoutRedirectURIs: postLogoutRedirectURIs)
        cached.removeAll()
        return try storage.write { tx in
            guard try tx.clients.find(clientID: clientID) == nil else { throw ValidationError("client \(clientID) already exists") }
            try tx.clients.insert(client, at: clock())
            guard let stored = try tx.clients.find(clientID: clientID) else { throw ValidationError("client \(clientID) vanished after insert") }
            return stored
        }
    }

    public func find(clientID: String) throws -> Client? {
        let marker = try storage.changeMarker()
        if marker != cachedAt {
            cached.removeAll()
            cachedAt = marker
        }
        let key = Array(clientID.utf8)
        if let client = cached[key] { return client }
        let client = try storage.read.clients.find(clientID: clientID)
        if let client, Array(client.clientID.utf8) == key { cached[key] = client }
        return client
    }
    public func list() throws -> [Client] { try storage.read.clients.list() }

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
