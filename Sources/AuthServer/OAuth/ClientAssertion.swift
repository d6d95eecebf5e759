import FoundationEssentials
import IssuerStorage
import SSOCore

/// `private_key_jwt` (OpenID Connect Core §9, RFC 7523 §2.2 and §3): the
/// client proves itself with a JWT signed by a key it registered
/// (`--jwks-file` or `--jwks-uri`), sent as `client_assertion` with
/// `client_assertion_type` `urn:ietf:params:oauth:client-assertion-type:jwt-bearer`.
struct ClientAssertion {
    static let type = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
    /// FAPI 2.0 §5.4.1 allows PS256, ES256 and EdDSA; RS256 for the many
    /// client libraries that default to it. Never `none` or an HMAC
    /// (RFC 8725 §3.1: a client secret is not a key here).
    static let algorithms: [JWSAlgorithm] = [.es256, .ps256, .edDSA, .rs256]
    /// FAPI 2.0 Security Profile §5.4.1: "shall use PS256, ES256 or EdDSA
    /// (using the Ed25519 variant)" for a client held to it.
    static let fapi2Algorithms: [JWSAlgorithm] = [.es256, .ps256, .edDSA]
    /// "exp within 5 minutes": an assertion that lives longer is refused,
    /// so a captured one is worth little and its `jti` is kept briefly.
    static let maximumLifetime: Int64 = 300
    /// Clock skew tolerated on exp, nbf and iat.
    static let leeway: Int64 = 60

    struct Claims: Decodable {
        let iss: String?
        let sub: String?
        let aud: AudienceClaim?
        let exp: Int64?
        let nbf: Int64?
        let iat: Int64?
        let jti: String?
        /// A request object's member: its presence marks one (RFC 9101 §10.8).
        let response_type: String?
    }

    let issuer: String
    /// The URL of the endpoint the assertion was sent to.
    let endpoint: String
    let now: Int64

    /// The client the assertion names, once every check of RFC 7523 §3
    /// passed; throws `invalid_client` naming the first that failed.
    /// `keys`: the key a client's `kid` names for an algorithm.
    /// `firstUse`: records the assertion's `jti` until the given time, true
    /// the first time (one atomic statement across processes and nodes).
    func verify(_ assertion: String, clients: ClientRegistry,
                keys: (Client, String, JWSAlgorithm) throws -> (any JWSVerificationKey)?,
                firstUse: (String, String, Int64) throws -> Bool) throws -> Client {
        let jwt: CompactJWT
        do { jwt = try CompactJWT(parsing: assertion) } catch { throw Self.refusal("client_assertion is not a JWT", detail: "\(error)") }
        // RFC 7523 §3: "1. The JWT MUST contain an "iss" (issuer) claim that
        // contains a unique identifier for the entity that issued the JWT"
        // and "2. ... "sub" (subject) ... For client authentication, the
        // subject MUST be the "client_id" of the OAuth client." OIDC Core §9:
        // iss and sub both the client_id. Read before the signature only to
        // find the client whose keys may verify it.
        guard let clientID = jwt.unverifiedIssuer, !clientID.isEmpty, clientID.utf8.count <= 64,
              let client = try clients.find(clientID: clientID) else {
            throw Self.refusal("client authentication failed", detail: "client_assertion names no known client in iss")
        }
        guard client.authMethod == "private_key_jwt" else {
            throw Self.refusal("client authentication failed", detail: "client \(client.clientID) is not registered for private_key_jwt")
        }
        let algorithm = JWSAlgorithm(rawValue: jwt.header.alg)
        let verified: VerifiedJWT
        do {
            let algorithms = client.isFAPI2 ? Self.fapi2Algorithms : Self.algorithms
            verified = try jwt.verify(algorithms: algorithms, types: .ifPresent(["JWT"], allowingApplicationPrefix: true)) { kid in
                guard let algorithm else { return nil }
                return try keys(client, kid, algorithm)
            }
        } catch let error as JWTError {
            throw Self.refusal("client authentication failed", detail: "client_assertion of \(client.clientID): \(error)")
        }
        let claims: Claims
        do { claims = try verified.claims(as: Claims.self) } catch {
            throw Self.refusal("client authentication failed", detail: "client_assertion claims of \(client.clientID): \(error)")
        }
        // RFC 9101 §10.8 (cross-JWT confusion): a request object signed by
        // the same key travels through the browser; one is never taken for
        // an assertion.
        guard claims.response_type == nil else {
            throw Self.refusal("client authentication failed", detail: "client_assertion of \(client.clientID) is a request object")
        }
        guard let sub = claims.sub, sub.bytesEqual(client.clientID), claims.iss?.bytesEqual(client.clientID) == true else {
            throw Self.refusal("client authentication failed", detail: "client_assertion iss and sub must both be the client_id")
        }
        // §3 "3. The JWT MUST contain an "aud" (audience) claim containing a
        // value that identifies the authorization server as an intended
        // audience": the issuer identifier (RFC 7523 §3, FAPI 2.0 §5.3.2.1),
        // the token endpoint's URL (OIDC Core §9), or the URL of the
        // endpoint it was sent to.
        let accepted = [issuer, issuer + "/token", endpoint]
        guard let audience = claims.aud, audience.values.contains(where: { value in accepted.contains { $0.bytesEqual(value) } }) else {
            throw Self.refusal("client authentication failed", detail: "client_assertion aud names neither the issuer nor this endpoint")
        }
        // FAPI 2.0 §5.3.2.1: "shall only accept its issuer identifier value
        // (as defined in [RFC8414]) as a string in the aud claim received in
        // client authentication assertions".
        if client.isFAPI2, !(audience.isSingleString && audience.values.first?.bytesEqual(issuer) == true) {
            throw Self.refusal("client authentication failed", detail: "client_assertion aud of FAPI 2.0 client \(client.clientID) "
                               + "must be the issuer identifier as a string")
        }
        // "4. The JWT MUST contain an "exp" (expiration time) claim that limits
        // the time window during which the JWT can be used."
        guard let exp = claims.exp, exp > now - Self.leeway, exp <= now + Self.maximumLifetime + Self.leeway else {
            throw Self.refusal("client authentication failed", detail: "client_assertion exp missing, past, or more than 5 minutes ahead")
        }
        // "5. The JWT MAY contain an "nbf" (not before) claim"; "6. ... "iat""
        guard (claims.nbf ?? now) <= now + Self.leeway, (claims.iat ?? now) <= now + Self.leeway else {
            throw Self.refusal("client authentication failed", detail: "client_assertion nbf or iat in the future")
        }
        // "7. The JWT MAY contain a "jti" (JWT ID) claim ... The authorization
        // server MAY ensure that JWTs are not replayed by maintaining the set of
        // used "jti" values for the length of time for which the JWT would be
        // considered valid": required here (OIDC Core §9 makes jti REQUIRED).
        guard let jti = claims.jti, (1...256).contains(jti.utf8.count) else {
            throw Self.refusal("client authentication failed", detail: "client_assertion without a usable jti")
        }
        guard try firstUse(client.clientID, jti, exp + Self.leeway) else {
            throw Self.refusal("client authentication failed", detail: "client_assertion jti of \(client.clientID) used before")
        }
        return client
    }

    static func refusal(_ description: String, detail: String) -> OAuthError {
        OAuthError(.invalidClient, description, detail: detail)
    }
}
