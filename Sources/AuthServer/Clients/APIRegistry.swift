import IssuerStorage
import SSOCore

/// The registered APIs (resource servers): which audience owns which
/// scope, so access tokens name the APIs they are good at and an unknown
/// scope is refused. Read on every token request and cached like the
/// clients: dropped whenever the storage's change marker moves or this
/// process writes one.
public final class APIRegistry {
    let storage: any IssuerStorage
    let clock: Clock
    private var cached: [RegisteredAPI]?
    private var cachedAt: Int64?

    public init(storage: any IssuerStorage, clock: @escaping Clock = systemClock) {
        self.storage = storage
        self.clock = clock
    }

    /// Every registered API, by audience.
    public func all() throws -> [RegisteredAPI] {
        let marker = try storage.changeMarker()
        if let cached, marker == cachedAt { return cached }
        let apis = try storage.read.apis.list()
        (cached, cachedAt) = (apis, marker)
        return apis
    }

    /// The API that owns `scope`, if one does. (A caller asking about
    /// several scopes takes `all()` once and asks the list.)
    public func owner<Token: StringProtocol>(of scope: Token) throws -> RegisteredAPI? {
        try all().owner(of: scope)
    }

    /// The API registered under exactly this audience.
    public func find(audience: String) throws -> RegisteredAPI? {
        try all().first { $0.audience.bytesEqual(audience) }
    }

    /// Standard scopes first, then each API's, in audience order: what
    /// discovery lists as `scopes_supported`.
    public func supportedScopes() throws -> [String] {
        StandardScopes.all + (try all().flatMap(\.scopes))
    }

    /// True for a standard scope or one a registered API owns.
    public func isKnown<Token: StringProtocol>(_ scope: Token) throws -> Bool {
        try all().isKnown(scope)
    }

    @discardableResult
    public func add(audience: String, name: String?, scopes: [String]) throws -> RegisteredAPI {
        try ResourceIndicator.validateForRegistration(audience)
        let name = name ?? audience
        guard (1...128).contains(name.utf8.count), FormParameters.firstControlCharacter(in: name) == nil else {
            throw ValidationError("an API name is 1 to 128 characters without control characters: \(name.debugDescription)")
        }
        guard !scopes.isEmpty else { throw ValidationError("an API owns at least one scope: give --scope") }
        var unique: [String] = []
        for scope in scopes where !unique.containsBytes(scope) {
            try ClientRegistry.validate(scope: scope)
            guard !StandardScopes.contains(scope) else {
                throw ValidationError("\(scope) is an OpenID Connect scope the issuer defines; an API cannot own it")
            }
            unique.append(scope)
        }
        let api = RegisteredAPI(audience: audience, name: name, scopes: unique)
        cached = nil
        return try storage.write { tx in
            try tx.serializeAdministrativeChanges()
            let registered = try tx.apis.list()
            if registered.contains(where: { $0.audience.bytesEqual(audience) }) { throw ValidationError.conflict("API \(audience) already exists") }
            for scope in unique {
                if let owner = registered.owner(of: scope) {
                    throw ValidationError("scope \(scope) is already owned by API \(owner.audience)")
                }
            }
            try tx.apis.insert(api, at: clock())
            return api
        }
    }

    /// Removes the API; its scopes are taken from every client registered
    /// for them, in the same write unit (they would name nothing). Access
    /// tokens already issued for it keep working at the API until they
    /// expire (it validates them offline). Returns the clients changed.
    /// `expecting` sees the API first, after every other administrative
    /// change has finished, and may refuse it (a stale `If-Match`).
    public func remove(audience: String, expecting: (RegisteredAPI) throws -> Void = { _ in }) throws -> [String] {
        cached = nil
        return try storage.write { tx in
            // Serialized: a client change in flight must not write back a
            // scope this removal takes away.
            try tx.serializeAdministrativeChanges()
            guard let api = try tx.apis.list().first(where: { $0.audience.bytesEqual(audience) }) else {
                throw ValidationError.notFound("no API \(audience.debugDescription)")
            }
            try expecting(api)
            guard !AdminAPIScopes.isAdminAPI(api) else {
                throw ValidationError("\(api.audience) is the admin API, which the issuer needs; turn it off with GATEHOUSE_ADMIN_API=off")
            }
            var changed: [String] = []
            for scope in api.scopes {
                for clientID in try tx.clients.removeScope(scope) where !changed.containsBytes(clientID) { changed.append(clientID) }
            }
            _ = try tx.apis.remove(audience: audience)
            return changed.sorted()
        }
    }
}

/// Questions about one snapshot of the registered APIs (`APIRegistry.all()`),
/// so a request that checks several scopes reads the registry once.
extension Array where Element == RegisteredAPI {
    /// The API that owns `scope`, if one does (each scope has one owner).
    public func owner<Token: StringProtocol>(of scope: Token) -> RegisteredAPI? {
        first { $0.scopes.containsBytes(scope) }
    }

    /// True for a standard scope or one of these APIs owns.
    public func isKnown<Token: StringProtocol>(_ scope: Token) -> Bool {
        StandardScopes.contains(scope) || owner(of: scope) != nil
    }
}
