import FoundationEssentials
import IssuerStorage
import SSOCore

/// Dynamic client registration: `POST /register` (RFC 7591 §3), and each
/// registered client's configuration endpoint, `GET|PUT|DELETE
/// /register/client?client_id=…` (RFC 7592 §2), both JSON, both with a
/// Bearer token (an initial access token, then the client's registration
/// access token).
public final class RegistrationResponder: RoutedEndpointGroup {
    public static let path = "/register"
    public static let clientPath = "/register/client"
    public let table: RouteTable

    public init(services: IssuerServices) {
        let handler = Registering(registration: services.dynamicRegistration)
        table = RouteTable([
            // RFC 7591 §3.1: "To register, the client or developer sends an
            // HTTP POST to the client registration endpoint".
            Endpoint(Self.path, .post, cache: .credentials, handler: handler.register),
            // RFC 7592 §2.1-2.3: read with GET, update with PUT, delete with DELETE.
            Endpoint(Self.clientPath, EndpointMethods(names: ["GET", "PUT", "DELETE"]), input: .query, cache: .credentials,
                     handler: handler.configure),
        ])
    }
}

/// The two endpoints' handlers: the JSON in and out, the tokens, and the
/// refusals' wire forms; DynamicRegistration decides.
struct Registering {
    let registration: DynamicRegistration

    func register(_ exchange: EndpointExchange) throws -> Response {
        do {
            let (metadata, _) = try Self.metadata(exchange.request)
            let answer = try registration.register(metadata, initialToken: try Self.bearerToken(exchange.request))
            SecurityEvents.clientRegistration("client_registered", client: answer.client.clientID, ip: exchange.request.remoteAddress)
            // RFC 7591 §3.2.1: "HTTP 201 Created".
            return try self.answer(answer, token: answer.registrationAccessToken, status: 201)
                .logging("registered client \(answer.client.clientID)")
        } catch let refusal as RegistrationRefusal {
            return try Self.refused(refusal)
        }
    }

    func configure(_ exchange: EndpointExchange) throws -> Response {
        do {
            let token = try Self.bearerToken(exchange.request)
            let client = try registration.client((try? exchange.parameters.single("client_id")) ?? nil, token: token)
            switch exchange.request.method {
            case "GET":
                return try self.answer(RegistrationAnswer(client: client, secret: nil, registrationAccessToken: nil), token: token)
            case "PUT":
                let (metadata, body) = try Self.metadata(exchange.request)
                let answer = try registration.update(client, with: metadata, body: body)
                SecurityEvents.clientRegistration("client_registration_updated", client: client.clientID, ip: exchange.request.remoteAddress)
                return try self.answer(answer, token: token).logging("updated client \(client.clientID)")
            default:
                try registration.delete(client)
                SecurityEvents.clientRegistration("client_registration_deleted", client: client.clientID, ip: exchange.request.remoteAddress)
                // RFC 7592 §2.3: "204 No Content".
                return Response(status: 204).logging("deleted client \(client.clientID)")
            }
        } catch let refusal as RegistrationRefusal {
            return try Self.refused(refusal)
        }
    }

    /// RFC 7591 §3.1: "the client metadata ... as top-level members of a
    /// JSON object" in an `application/json` body. The object as read
    /// (for PUT's `client_id`) and as metadata.
    static func metadata(_ request: Request) throws -> (ClientMetadata, [String: JSONValue]) {
        let type = request.header("content-type")?.split(separator: ";").first?.trimmingASCIIWhitespace().lowercased()
        guard type == "application/json" else { throw RegistrationRefusal.metadata("the body must be application/json") }
        let data = Data(request.body)
        guard let object = try? JSONDecoder().decode([String: JSONValue].self, from: data) else {
            throw RegistrationRefusal.metadata("the body is not a JSON object")
        }
        do { return (try JSONDecoder().decode(ClientMetadata.self, from: data), object) } catch let DecodingError.typeMismatch(_, context) {
            throw RegistrationRefusal.metadata("\(context.codingPath.map(\.stringValue).joined(separator: ".")) has the wrong type")
        } catch {
            throw RegistrationRefusal.metadata("the client metadata do not read: \(error)".prefix(200).description)
        }
    }

    /// RFC 6750 §2.1: `Authorization: Bearer <token>`; nil without one.
    static func bearerToken(_ request: Request) throws -> String? {
        guard let header = request.header("authorization") else { return nil }
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer", parts[1].utf8.count <= 512,
              parts[1].utf8.allSatisfy({ $0 > 32 && $0 < 127 }) else {
            throw RegistrationRefusal.invalidToken("the Authorization header is not a Bearer token")
        }
        return String(parts[1])
    }

    /// RFC 7591 §3.2.1 and RFC 7592 §3: the metadata, and the issuer's own
    /// members.
    func answer(_ answer: RegistrationAnswer, token: String?, status: Int = 200) throws -> Response {
        struct Body: Encodable {
            let client_id: String
            let client_secret: String?
            let client_secret_expires_at: Int64?
            let registration_access_token: String?
            let registration_client_uri: String
            let metadata: ClientMetadata

            func encode(to encoder: Encoder) throws {
                try metadata.encode(to: encoder)
                var container = encoder.container(keyedBy: Keys.self)
                try container.encode(client_id, forKey: .client_id)
                try container.encodeIfPresent(client_secret, forKey: .client_secret)
                // RFC 7591 §3.2.1: "client_secret_expires_at: REQUIRED if
                // client_secret is issued"; 0: it does not expire.
                try container.encodeIfPresent(client_secret_expires_at, forKey: .client_secret_expires_at)
                try container.encodeIfPresent(registration_access_token, forKey: .registration_access_token)
                try container.encode(registration_client_uri, forKey: .registration_client_uri)
            }

            enum Keys: String, CodingKey {
                case client_id, client_secret, client_secret_expires_at, registration_access_token, registration_client_uri
            }
        }
        let client = answer.client
        let body = Body(client_id: client.clientID, client_secret: answer.secret,
                        client_secret_expires_at: client.secretHash != nil ? 0 : nil, registration_access_token: token,
                        registration_client_uri: registration.registrationClientURI(client.clientID), metadata: ClientMetadata(client))
        return try .json(body, status: status)
    }

    /// RFC 7591 §3.2.2 (400, JSON) and RFC 6750 §3 (401 with the challenge).
    static func refused(_ refusal: RegistrationRefusal) throws -> Response {
        struct ErrorBody: Encodable {
            let error: String
            let error_description: String?
        }
        switch refusal {
        case .invalidToken(let description) where description.isEmpty:
            // RFC 6750 §3.1: a request without a token gets the challenge, no error code.
            return try Response.json(ErrorBody(error: "invalid_token", error_description: "an initial access token is required"),
                                     status: 401, headers: [("WWW-Authenticate", "Bearer")])
                .logging("registration without a token")
        case .invalidToken(let description):
            return try Response.json(ErrorBody(error: "invalid_token", error_description: description), status: 401,
                                     headers: [("WWW-Authenticate", "Bearer error=\"invalid_token\"")])
                .logging("registration token refused: \(description)")
        case .invalidMetadata(let code, let description):
            return try Response.json(ErrorBody(error: code, error_description: description), status: 400)
                .logging("registration refused: \(code): \(description)")
        }
    }
}
