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
import ArgumentParser
import FoundationEssentials
import Glibc
import OutboundHTTPS
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
    // Only caFile when given (a development stack's CA), else the system's CAs.
    let client = HTTPSClient(trust: caFile.map(OutboundTrust.only) ?? .system)
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

@main
struct Verify: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "verify",
                                                    abstract: "Validate a Gatehouse access token offline.")
    @Option(help: "The issuer, e.g. https://localhost:8443.") var issuer: String
    @Option(help: "This API's origin.") var audience: String
    @Option(help: "The scope this API requires.") var scope: String
    @Option(help: "PEM of the CA to trust for the issuer (default: the system's).") var caFile: String?
    @Option(help: "File that keeps the key set between runs.") var jwksCache: String?
    @Argument var token: String

    func run() throws {
        do {
            let keys = try signingKeys(issuer: issuer, caFile: caFile, cachePath: jwksCache)
            let validator = AccessTokenValidator(policy: AccessTokenPolicy(issuer: issuer, audience: audience, requiredScope: scope),
                                                 keys: keys)
            let claims = try validator.validate(authorization: "Bearer " + token, now: Int(time(nil)))
            printJSON(Verified(iss: claims.issuer, sub: claims.subject, aud: claims.audience.values, exp: claims.expiresAt,
                               scope: claims.scope, client_id: claims.clientID, email: claims.email))
        } catch let refusal as BearerError {
            printJSON(Refused(status: refusal.status, error: refusal.code.rawValue, error_description: refusal.description,
                              www_authenticate: refusal.challenge))
            throw ExitCode(1)
        } catch {
            printJSON(Refused(status: 503, error: "temporarily_unavailable", error_description: "\(error)", www_authenticate: nil))
            throw ExitCode(2)
        }
    }
}
