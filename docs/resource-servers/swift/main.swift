// Offline validation of a Gatehouse access token in Swift, with the project's
// ResourceServer module: the same AccessTokenValidator and JWKSCache that
// api-a and api-b run (Sources/ResourceServer/ServerA.swift), where every
// check of RFC 9068 §4 is a function of its own with the RFC quoted above it.
//
// A responder builds one validator at start and calls
// `validator.validate(authorization: request.header("authorization"), now:)`;
// a thrown BearerError is already the 401/403 response with its challenge
// (ProtectedAPIResponder does exactly this). Run as a program it checks one
// token and prints the claims (exit 0) or the refusal (exit 1) as JSON:
//
//   verify --issuer https://localhost:8443 --audience https://localhost:8444 \
//       --scope api:serverA --ca-file var/tls/ca.pem [--jwks-cache FILE] TOKEN
import FoundationEssentials
import Glibc
import ResourceServer
import SSOCore

struct Discovery: Decodable {
    let issuer: String
    let jwks_uri: String
}

struct Failure: Error {
    let message: String
}

/// The issuer's keys, found through discovery: fetched on first need,
/// refreshed after an hour, refetched on an unknown kid at most once per
/// 30 s, kept in `cachePath` across restarts when given.
func signingKeys(issuer: String, caFile: String?, cachePath: String?) throws -> JWKSCache {
    let client = HTTPSClient(caFile: caFile)  // trusts only caFile when given
    let reply = try client.get(issuer + "/.well-known/openid-configuration")
    guard reply.status == 200, let discovery = try? JSON.decoder.decode(Discovery.self, from: Data(reply.body)) else {
        throw Failure(message: "no discovery document at \(issuer)")
    }
    // OpenID Connect Discovery 1.0 §4.3: "The issuer value returned MUST be
    // identical to the Issuer URL that was used as the prefix".
    guard discovery.issuer == issuer else { throw Failure(message: "discovery names issuer \(discovery.issuer)") }
    return JWKSCache(fetcher: HTTPSJWKSFetcher(url: discovery.jwks_uri, client: client),
                     store: cachePath.map { JWKSFileStore(path: $0) },
                     policy: JWKSCachePolicy(maximumAge: 3600, unknownKeyRefetchInterval: 30),
                     log: { fputs("jwks: \($0)\n", stderr) })
}

/// What the program prints on success: the claims a handler typically uses.
struct Verified: Encodable {
    let iss: String
    let sub: String
    let aud: [String]
    let exp: Double
    let scope: String?
    let client_id: String?
    let email: String?  // absent in a machine client's token (client_credentials)
}

struct Refused: Encodable {
    let status: Int
    let error: String
    let error_description: String
    let www_authenticate: String?
}

func printJSON<T: Encodable>(_ value: T) {
    print(String(decoding: (try? JSON.encode(value)) ?? [], as: UTF8.self))
}

func run(_ arguments: [String]) -> Int32 {
    var options: [String: String] = [:], tokens: [String] = []
    var rest = arguments[...]
    while let argument = rest.popFirst() {
        if argument.hasPrefix("--"), let value = rest.popFirst() { options[String(argument.dropFirst(2))] = value } else { tokens.append(argument) }
    }
    guard let issuer = options["issuer"], let audience = options["audience"], let scope = options["scope"], tokens.count == 1 else {
        fputs("usage: verify --issuer URL --audience URL --scope SCOPE [--ca-file PEM] [--jwks-cache FILE] TOKEN\n", stderr)
        return 2
    }
    do {
        let keys = try signingKeys(issuer: issuer, caFile: options["ca-file"], cachePath: options["jwks-cache"])
        let validator = AccessTokenValidator(policy: AccessTokenPolicy(issuer: issuer, audience: audience, requiredScope: scope),
                                             keys: keys)
        let claims = try validator.validate(authorization: "Bearer " + tokens[0], now: Int(time(nil)))
        printJSON(Verified(iss: claims.issuer, sub: claims.subject, aud: claims.audience.values, exp: claims.expiresAt,
                           scope: claims.scope, client_id: claims.clientID, email: claims.email))
        return 0
    } catch let refusal as BearerError {
        printJSON(Refused(status: refusal.status, error: refusal.code.rawValue, error_description: refusal.description,
                          www_authenticate: refusal.challenge))
        return 1
    } catch {
        printJSON(Refused(status: 503, error: "temporarily_unavailable", error_description: "\(error)", www_authenticate: nil))
        return 2
    }
}

exit(run(Array(CommandLine.arguments.dropFirst())))
