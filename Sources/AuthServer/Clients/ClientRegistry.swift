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
    let rules: ClientRules
    private var cached: [[UInt8]: Client] = [:]
    private var cachedAt: Int64?

    public init(storage: any IssuerStorage, apis: APIRegistry, lifetimes: TokenLifetimes, hasher: PasswordHasher = PasswordHasher(),
                clock: @escaping Clock = systemClock) {
        self.storage = storage
        self.hasher = hasher
        self.clock = clock
        rules = ClientRules(apis: apis, lifetimes: lifetimes)
    }

    @discardableResult
    public func add(clientID: String, redirectURIs: [String], postLogoutRedirectURIs: [String] = [], scopes: [String],
                    nativeSSOGroup: String? = nil, secret: String? = nil) throws -> Client {
        try add(ClientRegistration(clientID: clientID, redirectURIs: redirectURIs, postLogoutRedirectURIs: postLogoutRedirectURIs,
                                   scopes: scopes, nativeSSOGroup: nativeSSOGroup, secret: secret))
    }

    @discardableResult
    public func add(_ registration: ClientRegistration) throws -> Client {
        let client = try prepared(registration)
        cached.removeAll()
        return try storage.write { tx in try insert(client, tx) }
    }

    /// The client a registration describes, checked whole; nothing stored.
    func prepared(_ registration: ClientRegistration) throws -> Client {
        try Self.validate(clientID: registration.clientID)
        try Self.refuseManaged(registration.clientID, "registered again")
        let grantTypes = registration.grantTypes.isEmpty ? Client.defaultGrantTypes : registration.grantTypes
        let signsUsersIn = grantTypes.containsBytes("authorization_code")
        let scopes = registration.scopes.isEmpty && signsUsersIn ? ["openid"] : registration.scopes
        let client = Client(
            clientID: registration.clientID, secretHash: try registration.secret.map(hashSecret) ?? registration.keptSecretHash,
            scopes: Self.unique(scopes),
            nativeSSOGroup: registration.nativeSSOGroup, redirectURIs: Self.unique(registration.redirectURIs),
            postLogoutRedirectURIs: Self.unique(registration.postLogoutRedirectURIs), grantTypes: Self.unique(grantTypes),
            requireDPoP: registration.requireDPoP, requirePAR: registration.requirePAR,
            accessTokenLifetime: registration.accessTokenLifetime, refreshTokenLifetime: registration.refreshTokenLifetime,
            iosAppID: registration.iosAppID, androidPackage: registration.androidPackage,
            androidCertificateFingerprints: registration.androidCertificateFingerprints.map { $0.uppercased() },
            displayName: registration.displayName, registrationID: SecureRandom.token(byteCount: 16),
            backchannelLogoutURI: registration.backchannelLogoutURI, authMethod: registration.authMethod, jwks: registration.jwks,
            jwksURI: registration.jwksURI, requireSignedRequestObject: registration.requireSignedRequestObject,
            profile: registration.profile.flatMap { $0 == "none" ? nil : $0 },
            idTokenAlgorithm: registration.idTokenAlgorithm.flatMap { $0 == "RS256" ? nil : $0 },
            registrationAccessTokenHash: registration.registrationAccessTokenHash)
        try rules.check(client)
        return client
    }

    /// Stores a prepared client inside the caller's write unit.
    func insert(_ client: Client, _ tx: any IssuerWrites) throws -> Client {
        try tx.serializeAdministrativeChanges()
        try Self.checkSigningKey(for: client, tx)
        guard try tx.clients.find(clientID: client.clientID) == nil else { throw ValidationError.conflict("client \(client.clientID) already exists") }
        try tx.clients.insert(client, at: clock())
        guard let stored = try tx.clients.find(clientID: client.clientID) else {
            throw ValidationError("client \(client.clientID) vanished after insert")
        }
        return stored
    }

    /// Replaces a stored client's registration whole (RFC 7592 §2.2),
    /// checked as `add` checks it; a refusal changes nothing.
    /// `expecting` sees the stored client first, after every other
    /// administrative change has finished: a replacement built from an
    /// earlier read must not undo a change made since.
    func replace(_ client: Client, expecting: (Client) throws -> Void = { _ in }) throws -> Client {
        try rules.check(client)
        cached.removeAll()
        return try storage.write { tx in
            try tx.serializeAdministrativeChanges()
            guard let stored = try tx.clients.find(clientID: client.clientID) else {
                throw ValidationError.notFound("no client \(client.clientID.debugDescription)")
            }
            try expecting(stored)
            try Self.checkSigningKey(for: client, tx)
            _ = try tx.clients.update(client)
            return client
        }
    }

    /// Drops the cache after a write made outside this registry's methods.
    func forgetCached() { cached.removeAll() }

    /// Applies `changes` to the stored client, checks the result as `add`
    /// would, and stores it; a refusal changes nothing.
    /// `expecting` sees the stored client first, after every other
    /// administrative change has finished, and may refuse it (a stale
    /// `If-Match`).
    @discardableResult
    public func update(clientID: String, _ changes: ClientChanges, expecting: (Client) throws -> Void = { _ in }) throws -> Client {
        try Self.validate(clientID: clientID)
        guard !changes.isEmpty else { throw ValidationError("nothing to change: give at least one option (see --help)") }
        if !changes.changesOnlyTheName { try Self.refuseManaged(clientID, "changed except for its --name") }
        cached.removeAll()
        return try storage.write { tx in
            try tx.serializeAdministrativeChanges()
            guard let stored = try tx.clients.find(clientID: clientID) else { throw ValidationError.notFound("no client \(clientID.debugDescription)") }
            try expecting(stored)
            let client = try Self.applying(changes, to: stored)
            try rules.check(client)
            try Self.checkSigningKey(for: client, tx)
            _ = try tx.clients.update(client)
            return client
        }
    }

    /// Replaces a confidential client's secret; the old one stops working
    /// at once. A public client stays public (its app holds no secret).
    public func replaceSecret(clientID: String, secret: String) throws {
        try Self.validate(clientID: clientID)
        let secretHash = try hashSecret(secret)
        cached.removeAll()
        try storage.write { tx in
            // Serialized: the row is written whole, so a change made
            // meanwhile (a scope taken away) must not be undone by it.
            try tx.serializeAdministrativeChanges()
            guard var client = try tx.clients.find(clientID: clientID) else { throw ValidationError.notFound("no client \(clientID.debugDescription)") }
            guard client.isConfidential else {
                throw ValidationError("client \(clientID) is public (its app holds no secret); register a confidential client instead")
            }
            client.secretHash = secretHash
            _ = try tx.clients.update(client)
        }
    }

    /// Deletes the client and everything issued to it (ClientStore.delete);
    /// its access tokens stop working at the issuer at once (the verifier
    /// asks for the client) and at the APIs when they expire.
    public func delete(clientID: String, expecting: (Client) throws -> Void = { _ in }) throws {
        try Self.validate(clientID: clientID)
        try Self.refuseManaged(clientID, "deleted")
        cached.removeAll()
        try storage.write { tx in
            try tx.serializeAdministrativeChanges()
            guard let stored = try tx.clients.find(clientID: clientID) else { throw ValidationError.notFound("no client \(clientID.debugDescription)") }
            try expecting(stored)
            guard try tx.clients.delete(clientID: clientID) else { throw ValidationError.notFound("no client \(clientID.debugDescription)") }
        }
    }

    /// The account page's client is Gatehouse's own (AccountClient): setup
    /// keeps it as the page needs it, so an administrator may rename it and
    /// nothing more. Deleting it would only last until the next start.
    static func refuseManaged(_ clientID: String, _ what: String) throws {
        guard AccountClient.isAccountClient(clientID) else { return }
        throw ValidationError("\(clientID) is the account page's own sign-in client, kept by ssoctl setup; it cannot be \(what)")
    }

    /// Creates `client`, or brings the stored one back to it, keeping a name
    /// an administrator gave it (AccountClient); true when created now.
    /// Writes nothing when it is as it should be, so every start does not
    /// move the change marker. Two nodes starting at once may both try to
    /// create it: the loser finds the winner's row on its second pass.
    @discardableResult
    func ensureManaged(_ client: Client) throws -> Bool {
        try rules.check(client)
        cached.removeAll()
        for attempt in 1...2 {
            do {
                return try storage.write { tx in
                    try tx.serializeAdministrativeChanges()
                    guard let stored = try tx.clients.find(clientID: client.clientID) else {
                        try tx.clients.insert(client, at: clock())
                        return true
                    }
                    var wanted = client
                    wanted.displayName = stored.displayName ?? client.displayName
                    if stored != wanted { _ = try tx.clients.update(wanted) }
                    return false
                }
            } catch where attempt == 1 {
                continue
            }
        }
        return false
    }

    /// RFC 6749 §2.3.1: the secret is kept only as a scrypt hash, verified
    /// in constant time (PasswordHasher).
    func hashSecret(_ secret: String) throws -> String {
        guard secret.utf8.count >= 16 else { throw ValidationError("a client secret must have at least 16 characters") }
        guard FormParameters.firstControlCharacter(in: secret) == nil else { throw ValidationError("a client secret has no control characters") }
        return try hasher.hash(password: secret)
    }

    static func applying(_ changes: ClientChanges, to stored: Client) throws -> Client {
        var client = stored
        if let value = changes.redirectURIs { client.redirectURIs = unique(value) }
        if let value = changes.postLogoutRedirectURIs { client.postLogoutRedirectURIs = unique(value) }
        if let value = changes.scopes { client.scopes = unique(value) }
        if let value = changes.grantTypes { client.grantTypes = unique(value) }
        client.redirectURIs = try edit(client.redirectURIs, adding: changes.addRedirectURIs, removing: changes.removeRedirectURIs,
                                       what: "redirect URI")
        client.postLogoutRedirectURIs = try edit(client.postLogoutRedirectURIs, adding: changes.addPostLogoutRedirectURIs,
                                                 removing: changes.removePostLogoutRedirectURIs, what: "post-logout redirect URI")
        client.scopes = try edit(client.scopes, adding: changes.addScopes, removing: changes.removeScopes, what: "scope")
        client.grantTypes = try edit(client.grantTypes, adding: changes.addGrantTypes, removing: changes.removeGrantTypes, what: "grant type")
        if let value = changes.requireDPoP { client.requireDPoP = value }
        if let value = changes.requirePAR { client.requirePAR = value }
        if let value = changes.accessTokenLifetime { client.accessTokenLifetime = value == 0 ? nil : value }
        if let value = changes.refreshTokenLifetime { client.refreshTokenLifetime = value == 0 ? nil : value }
        if let value = changes.iosAppID { client.iosAppID = value.isEmpty ? nil : value }
        if let value = changes.androidPackage { client.androidPackage = value.isEmpty ? nil : value }
        if let value = changes.androidCertificateFingerprints { client.androidCertificateFingerprints = value.map { $0.uppercased() } }
        if let value = changes.displayName { client.displayName = value.isEmpty ? nil : value }
        if let value = changes.backchannelLogoutURI { client.backchannelLogoutURI = value.isEmpty ? nil : value }
        if let value = changes.authMethod { client.authMethod = value.isEmpty ? nil : value }
        if let value = changes.jwks { (client.jwks, client.jwksURI) = (value, nil) }
        if let value = changes.jwksURI { (client.jwks, client.jwksURI) = (nil, value) }
        if let value = changes.requireSignedRequestObject { client.requireSignedRequestObject = value }
        if let value = changes.idTokenAlgorithm { client.idTokenAlgorithm = value == "RS256" ? nil : value }
        if let value = changes.profile { client.profile = value == "none" ? nil : value }
        return client
    }

    /// A client's tokens are signed with its algorithm's active key: one
    /// must exist before a client may ask for it (RS256's always does).
    static func checkSigningKey(for client: Client, _ tx: any IssuerWrites) throws {
        guard let algorithm = client.idTokenAlgorithm else { return }
        guard try tx.signingKeys.all().contains(where: { $0.algorithm == algorithm && $0.retiredAt == nil }) else {
            throw ValidationError("no \(algorithm) signing key yet: run ssoctl keys rotate --alg \(algorithm) first")
        }
    }

    /// Removing a value the list does not hold is a mistake worth naming
    /// (a typo would otherwise leave the old value in force).
    static func edit(_ list: [String], adding: [String], removing: [String], what: String) throws -> [String] {
        var result = list
        for value in removing {
            guard result.containsBytes(value) else { throw ValidationError("the client has no \(what) \(value.debugDescription)") }
            result.removeAll { $0.bytesEqual(value) }
        }
        for value in adding where !result.containsBytes(value) { result.append(value) }
        return result
    }

    static func unique(_ values: [String]) -> [String] {
        var result: [String] = []
        for value in values where !result.containsBytes(value) { result.append(value) }
        return result
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
