import FoundationEssentials
import IssuerStorage
import SSOCore

/// Who is calling the token endpoint (RFC 6749 §2.3).
public struct ClientAuthenticator {
    let clients: ClientRegistry
    let hasher: PasswordHasher

    public init(clients: ClientRegistry, hasher: PasswordHasher = PasswordHasher()) {
        self.clients = clients
        self.hasher = hasher
    }

    /// Public clients name themselves with `client_id` in the body or with
    /// HTTP Basic and an empty password; confidential clients must use
    /// client_secret_basic with their secret.
    public func authenticate(_ request: Request, form: FormParameters) throws -> Client {
        let basic = try Self.basicCredentials(request.header("authorization"))
        let bodyClientID = try form.single("client_id")
        func invalidClient(_ text: String) -> OAuthError {
            var error = OAuthError(.invalidClient, text)
            error.usedBasicAuthentication = basic != nil
            return error
        }
        // RFC 6749 §2.3: "The client MUST NOT use more than one
        // authentication method in each request."
        if try form.single("client_secret") != nil { throw invalidClient("client_secret_post is not supported; use HTTP Basic") }
        if let basic, let bodyClientID, !bodyClientID.bytesEqual(basic.id) {
            throw OAuthError.invalidRequest("client_id does not match the Authorization header")
        }
        guard let clientID = basic?.id ?? bodyClientID else { throw invalidClient("client authentication is required") }
        guard let client = try clients.find(clientID: clientID) else {
            var error = invalidClient("unknown client")
            error.detail = "no client with the client_id presented"
            throw error
        }
        if let secretHash = client.secretHash {
            guard let secret = basic?.secret, !secret.isEmpty, hasher.verify(password: secret, against: secretHash) else {
                var error = invalidClient("client authentication failed")
                error.detail = basic?.secret.isEmpty == false ? "wrong secret for \(client.clientID)" : "confidential client \(client.clientID) sent no secret"
                throw error
            }
        } else if let basic, !basic.secret.isEmpty {
            throw invalidClient("public clients authenticate with an empty password")
        }
        return client
    }

    /// Basic credentials only, checked before anything else of the request
    /// is read (RFC 7662 §2.1: the introspection endpoint "MUST also require
    /// some form of authorization"): a confidential client, or invalid_client.
    public func authenticateConfidential(_ request: Request) throws -> Client {
        func refuse(_ text: String, detail: String) -> OAuthError {
            var error = OAuthError(.invalidClient, text, detail: detail)
            error.usedBasicAuthentication = request.header("authorization") != nil
            return error
        }
        guard let basic = try Self.basicCredentials(request.header("authorization")) else {
            throw refuse("client authentication is required (client_secret_basic)", detail: "no Basic credentials")
        }
        guard let client = try clients.find(clientID: basic.id), let secretHash = client.secretHash else {
            throw refuse("client authentication failed", detail: "unknown or public client")
        }
        guard !basic.secret.isEmpty, hasher.verify(password: basic.secret, against: secretHash) else {
            throw refuse("client authentication failed", detail: "wrong secret for \(client.clientID)")
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
