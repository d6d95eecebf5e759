import FoundationEssentials
import IssuerStorage
import SSOCore

/// Request objects (RFC 9101, "JWT-Secured Authorization Request"): the
/// authorization request as a JWT signed with a key the client registered
/// (`--jwks-file` or `--jwks-uri`), sent by value as `request` to /authorize
/// or to /par. Only signed objects: `alg: none` and encrypted (JWE) objects
/// are refused, and passing one by reference (`request_uri` to the
/// client's own URL) is not supported (only PAR's `request_uri`).
public struct RequestObjects {
    /// The client assertion's algorithms (FAPI 2.0 §5.4.1: PS256, ES256,
    /// EdDSA; RS256 for the libraries that default to it).
    static let algorithms = ClientAssertion.algorithms
    /// FAPI 2.0 Message Signing §5.3.1: "shall require the request object
    /// to contain an exp claim that has a lifetime of no longer than 60
    /// minutes after the nbf claim": at most an hour ahead, for everyone.
    static let maximumLifetime: Int64 = 3600
    static let leeway: Int64 = 60
    /// RFC 9101 §4: "Media type ... application/oauth-authz-req+jwt"; §10.8:
    /// explicit typing keeps a request object from being taken for another
    /// kind of JWT signed by the same key. Absent is accepted (OIDC Core's
    /// request objects have no `typ`), `JWT` too.
    static let types = JWTTypes.ifPresent(["oauth-authz-req+jwt", "JWT"], allowingApplicationPrefix: true)
    /// The pair a pushed request that came as a request object is stored
    /// with, so /authorize holds it to `--require-signed-request-object`.
    /// /par keeps only the parameters of an authorization request
    /// (AuthorizationRequestValidator.understoodParameters), so no client
    /// can store it; /authorize never reads it from a query.
    public static let verifiedMarker = (name: "request_object", value: "verified")

    let keys: ClientKeys
    let issuer: String
    let clock: Clock

    public init(keys: ClientKeys, issuer: String, clock: @escaping Clock = systemClock) {
        self.keys = keys
        self.issuer = issuer
        self.clock = clock
    }

    /// The authorization request `object` carries, as parameters:
    /// `client_id` (the client's), then each of the object's members that an
    /// authorization request has, and the verified marker. RFC 9101 §6.3:
    /// "The authorization server MUST only use the parameters in the Request
    /// Object, even if the same parameter is provided in the query
    /// parameter." Throws `invalid_request_object` naming the first check
    /// that failed.
    public func parameters(of object: String, client: Client) throws -> FormParameters {
        let claims = try verifiedClaims(object, client: client)
        try checkClaims(claims, client: client)
        var pairs: [(name: String, value: String)] = [("client_id", client.clientID)]
        for (name, member) in claims.sorted(by: { $0.key < $1.key })
        where AuthorizationRequestValidator.understoodParameters.contains(name) && name != "client_id" {
            // RFC 9101 §4: "The request and request_uri parameters MUST NOT be
            // included in Request Objects."
            guard name != "request" && name != "request_uri" else { throw Self.refusal("a request object must not hold \(name)") }
            pairs += try Self.values(member, of: name).map { (name, $0) }
        }
        return FormParameters(pairs: pairs + [Self.verifiedMarker])
    }

    /// §6.2: "The Authorization Server MUST validate the signature of the
    /// JSON Web Signature [RFC7515] signed Request Object", with a key the
    /// client registered, under an algorithm pinned here (never `none`).
    func verifiedClaims(_ object: String, client: Client) throws -> [String: Member] {
        let jwt: CompactJWT
        do { jwt = try CompactJWT(parsing: object) } catch {
            throw Self.refusal("request must be a signed JWT (JWS compact serialization); encrypted request objects are not supported",
                               detail: "\(error)")
        }
        guard ClientKeys.has(client) else {
            throw Self.refusal("this client registered no keys to sign request objects with", detail: "client \(client.clientID) has no jwks")
        }
        let algorithm = JWSAlgorithm(rawValue: jwt.header.alg)
        do {
            // FAPI 2.0 §5.4.1: PS256, ES256 or EdDSA for a client held to it.
            let algorithms = client.isFAPI2 ? ClientAssertion.fapi2Algorithms : Self.algorithms
            let verified = try jwt.verify(algorithms: algorithms, types: Self.types) { kid in
                guard let algorithm else { return nil }
                return try keys.key(client, kid: kid, algorithm: algorithm)
            }
            return try verified.claims(as: [String: Member].self)
        } catch let error as JWTError {
            throw Self.refusal("the request object's signature does not verify with the client's keys",
                               detail: "request object of \(client.clientID): \(error)")
        } catch {
            throw Self.refusal("the client's keys could not be read", detail: "keys of \(client.clientID): \(error)")
        }
    }

    /// §4: "If signed, the Authorization Request Object SHOULD contain the
    /// Claims iss (issuer) and aud (audience) as members with their semantics
    /// being the same as defined in the JWT [RFC7519] specification. The
    /// value of aud should be the value of the authorization server (AS)
    /// issuer." Required here, with `exp`: a captured object is not
    /// replayable at another server or after an hour.
    func checkClaims(_ claims: [String: Member], client: Client) throws {
        // §6.3: "The client ID values in the client_id request parameter and
        // in the Request Object client_id claim MUST be identical."
        guard case .string(let clientID)? = claims["client_id"], clientID.bytesEqual(client.clientID) else {
            throw Self.refusal("the request object's client_id must be the client's")
        }
        guard case .string(let iss)? = claims["iss"], iss.bytesEqual(client.clientID) else {
            throw Self.refusal("the request object's iss must be the client_id")
        }
        let audiences: [String]
        switch claims["aud"] {
        case .string(let value)?: audiences = [value]
        case .strings(let values)?: audiences = values
        default: audiences = []
        }
        guard audiences.contains(where: { $0.bytesEqual(issuer) }) else {
            throw Self.refusal("the request object's aud must be this issuer's identifier")
        }
        let now = clock()
        guard case .integer(let exp)? = claims["exp"], exp > now - Self.leeway, exp <= now + Self.maximumLifetime + Self.leeway else {
            throw Self.refusal("the request object needs an exp in the future and at most an hour ahead")
        }
        // FAPI 2.0 Message Signing §5.3.1: nbf "no longer than 60 minutes in the past".
        if let nbf = claims["nbf"] {
            guard case .integer(let value) = nbf, value <= now + Self.leeway, value >= now - Self.maximumLifetime - Self.leeway else {
                throw Self.refusal("the request object's nbf must be within the last hour")
            }
        }
        if let iat = claims["iat"] {
            guard case .integer(let value) = iat, value <= now + Self.leeway else { throw Self.refusal("the request object's iat is in the future") }
        }
    }

    /// An authorization request parameter's values: a string (a number
    /// for max_age; RFC 8707's `resource` may be an array of strings).
    static func values(_ member: Member, of name: String) throws -> [String] {
        switch member {
        case .string(let value): return [value]
        case .integer(let value) where name == "max_age": return [String(value)]
        case .strings(let values) where name == "resource": return values
        default: throw refusal("the request object's \(name) must be a string")
        }
    }

    static func refusal(_ description: String, detail: String = "") -> OAuthError {
        OAuthError(.invalidRequestObject, description, detail: detail)
    }

    /// A member of the request object, as far as an authorization request
    /// can use it.
    enum Member: Decodable, Equatable {
        case string(String)
        case integer(Int64)
        case strings([String])
        case other

        init(from decoder: Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let value = try? container.decode(String.self) { self = .string(value) }
            else if let value = try? container.decode(Int64.self) { self = .integer(value) }
            else if let values = try? container.decode([String].self) { self = .strings(values) }
            else { self = .other }
        }
    }
}
