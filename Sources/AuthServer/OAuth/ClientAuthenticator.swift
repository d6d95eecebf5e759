import FoundationEssentials
import IssuerStorage
import SSOCore

/// Who is calling the token endpoint, PAR, revocation or introspection
/// (RFC 6749 §2.3): a public client by its `client_id`, a confidential one
/// by `client_secret_basic`, `client_secret_post` or `private_key_jwt`.
public struct ClientAuthenticator {
    let clients: ClientRegistry
    let hasher: PasswordHasher
    let issuer: String
    /// Clients' registered keys (their JWK Set, or the one at their `--jwks-uri`).
    public let keys: ClientKeys
    /// Records a client assertion's `jti` (a hash of the client id and it)
    /// until the given time: true the first time, across every process and
    /// node (the DPoP proofs' store).
    let firstUse: ([UInt8], Int64) throws -> Bool
    let clock: Clock

    public init(clients: ClientRegistry, hasher: PasswordHasher = PasswordHasher(), issuer: String = "",
                http: any ProviderDocumentFetching = NoProviderHTTP(), clock: @escaping Clock = systemClock,
                firstUse: @escaping ([UInt8], Int64) throws -> Bool = { _, _ in true }) {
        self.clients = clients
        self.hasher = hasher
        self.issuer = issuer
        self.clock = clock
        self.firstUse = firstUse
        keys = ClientKeys(http: http, clock: clock)
    }

    /// The methods a request may use, as it presents them.
    struct Presented {
        let basic: (id: String, secret: String)?
        let bodyClientID: String?
        let bodySecret: String?
        let assertion: (type: String?, value: String)?

        /// RFC 6749 §2.3: "The client MUST NOT use more than one
        /// authentication method in each request." Basic with an empty
        /// password is a public client naming itself, not a method.
        var methodCount: Int {
            (basic.map { $0.secret.isEmpty ? 0 : 1 } ?? 0) + (bodySecret == nil ? 0 : 1) + (assertion == nil ? 0 : 1)
        }
    }

    /// Public clients name themselves with `client_id` in the body or with
    /// HTTP Basic and an empty password; confidential clients use the one
    /// method they are registered for (a client with a secret and no
    /// registered method: either secret method, as Keycloak's "client
    /// secret" authenticator).
    public func authenticate(_ request: Request, form: FormParameters) throws -> Client {
        let presented = Presented(basic: try Self.basicCredentials(request.header("authorization")),
                                  bodyClientID: try form.single("client_id"), bodySecret: try form.single("client_secret"),
                                  assertion: try form.single("client_assertion").map { (try form.single("client_assertion_type"), $0) })
        func invalidClient(_ text: String, detail: String = "") -> OAuthError {
            var error = OAuthError(.invalidClient, text, detail: detail)
            error.usedBasicAuthentication = presented.basic != nil
            return error
        }
        guard presented.methodCount <= 1 else {
            throw invalidClient("use exactly one client authentication method", detail: "\(presented.methodCount) methods in one request")
        }
        if let assertion = presented.assertion {
            return try assertedClient(assertion, bodyClientID: presented.bodyClientID, endpoint: issuer + request.path)
        }
        if let basic = presented.basic, let bodyClientID = presented.bodyClientID, !bodyClientID.bytesEqual(basic.id) {
            throw OAuthError.invalidRequest("client_id does not match the Authorization header")
        }
        guard let clientID = presented.basic?.id ?? presented.bodyClientID else { throw invalidClient("client authentication is required") }
        guard let client = try clients.find(clientID: clientID) else {
            throw invalidClient("unknown client", detail: "no client with the client_id presented")
        }
        let secret = presented.bodySecret ?? presented.basic?.secret
        let method = presented.bodySecret != nil ? "client_secret_post" : "client_secret_basic"
        if client.authMethod == "private_key_jwt" {
            throw invalidClient("this client authenticates with private_key_jwt", detail: "\(client.clientID) sent no client_assertion")
        }
        if let secretHash = client.secretHash {
            guard let secret, !secret.isEmpty, client.authMethod == nil || client.authMethod == method else {
                throw invalidClient("client authentication failed",
                                    detail: secret?.isEmpty == false ? "\(client.clientID) is not registered for \(method)"
                                        : "confidential client \(client.clientID) sent no secret")
            }
            guard hasher.verify(password: secret, against: secretHash) else {
                throw invalidClient("client authentication failed", detail: "wrong secret for \(client.clientID)")
            }
        } else if secret?.isEmpty == false {
            throw invalidClient("public clients send no secret")
        }
        return client
    }

    /// RFC 7523 §2.2: "client_assertion_type ... MUST be
    /// urn:ietf:params:oauth:client-assertion-type:jwt-bearer"; "client_id
    /// ... If present, [it] MUST identify the client" (RFC 6749 §2.3).
    func assertedClient(_ assertion: (type: String?, value: String), bodyClientID: String?, endpoint: String) throws -> Client {
        guard let type = assertion.type, type.bytesEqual(ClientAssertion.type) else {
            throw ClientAssertion.refusal("client_assertion_type must be \(ClientAssertion.type)", detail: "wrong client_assertion_type")
        }
        // Before anything is recorded: a refused request changes nothing.
        if let bodyClientID, let named = try? CompactJWT(parsing: assertion.value).unverifiedIssuer, !bodyClientID.bytesEqual(named) {
            throw OAuthError.invalidRequest("client_id does not match the client_assertion")
        }
        let check = ClientAssertion(issuer: issuer, endpoint: endpoint, now: clock())
        return try check.verify(assertion.value, clients: clients, keys: key, firstUse: { clientID, jti, until in
            try firstUse(SHA256.hash("client_assertion " + clientID + " " + jti), until)
        })
    }

    /// The key `kid` names among the client's registered keys.
    func key(_ client: Client, _ kid: String, _ algorithm: JWSAlgorithm) throws -> (any JWSVerificationKey)? {
        do { return try keys.key(client, kid: kid, algorithm: algorithm) } catch {
            throw ClientAssertion.refusal("client authentication failed", detail: "keys of \(client.clientID): \(error)")
        }
    }

    /// RFC 7662 §2.1: the introspection endpoint "MUST also require some
    /// form of authorization": a confidential client, by any of its methods,
    /// or invalid_client.
    public func authenticateConfidential(_ request: Request, form: FormParameters) throws -> Client {
        let client = try authenticate(request, form: form)
        guard client.isConfidential else {
            var error = OAuthError(.invalidClient, "client authentication is required (a confidential client)",
                                   detail: "public client \(client.clientID) at an endpoint for confidential clients")
            error.usedBasicAuthentication = request.header("authorization") != nil
            throw error
        }
        return client
    }

    /// RFC 6749 §2.3.1: the client id and password are form-urlencoded, then
    /// joined with ":" and base64-encoded (RFC 7617).
    static func basicCredentials(_ header: String?) throws -> (id: String, secret: String)? {
        guard let header else { return nil }
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.first?.lowercased() == "basic" else { return nil }
        guard parts.count == 2, parts[1].utf8.count <= 2048, let data = Data(base64Encoded: parts[1].trimmingASCIIWhitespace()),
              let decoded = String(data: data, encoding: .utf8), let colon = decoded.firstIndex(of: ":") else {
            var error = OAuthError(.invalidClient, "malformed Basic credentials")
            error.usedBasicAuthentication = true
            throw error
        }
        func unescape(_ text: Substring) throws -> String {
            do { return try FormParser.decode(Array(text.utf8)[...]) } catch {
                var error = OAuthError(.invalidClient, "malformed Basic credentials")
                error.usedBasicAuthentication = true
                throw error
            }
        }
        let id = try unescape(decoded[..<colon])
        // The client id is an identifier: no control character, as for the
        // body's client_id (FormParameters.single).
        if FormParameters.firstControlCharacter(in: id) != nil {
            var error = OAuthError(.invalidClient, "malformed Basic credentials", detail: "control character in the Basic client id")
            error.usedBasicAuthentication = true
            throw error
        }
        return (id, try unescape(decoded[decoded.index(after: colon)...]))
    }
}
