/// A resource server registered with the issuer (`ssoctl api add`): an
/// audience and the scopes it owns. An access token's `aud` lists the APIs
/// that own a scope it grants (RFC 9068 §3, RFC 8707).
public struct RegisteredAPI: Equatable, Sendable {
    /// An absolute URI, usually the API's origin: the `aud` value its
    /// tokens carry and the `resource` value that names it (RFC 8707 §2).
    public let audience: String
    public let name: String
    /// Each scope is owned by exactly one API, so a scope names its audience.
    public let scopes: [String]

    public init(audience: String, name: String, scopes: [String]) {
        self.audience = audience
        self.name = name
        self.scopes = scopes
    }
}

public protocol APIReads {
    /// Every registered API by audience (bytes), each with its scopes sorted.
    func list() throws -> [RegisteredAPI]
}

public protocol APIStore: APIReads {
    /// Registers `api`; the caller has checked in the same write unit that
    /// neither the audience nor any of its scopes is registered (a unique
    /// key still refuses a concurrent duplicate).
    func insert(_ api: RegisteredAPI, at now: Int64) throws
    /// Removes the API and its scopes; false when there is no such API.
    func remove(audience: String) throws -> Bool
}
