import Foundation
@testable import ResourceServer
import SSOCore

/// RSA keys are slow to make: each test key is generated once per run.
enum TestKeys {
    static let issuer = try! RSAKey.generate()
    static let rotated = try! RSAKey.generate()
    static let stranger = try! RSAKey.generate()
    static let issuerKID = "issuer-key-1"
    static let rotatedKID = "issuer-key-2"

    static func jwk(_ key: RSAKey, kid: String) -> JWK { try! JWK(kid: kid, key: key) }
    static var issuerSet: JWKSet { JWKSet(keys: [jwk(issuer, kid: issuerKID)]) }
    static var rotatedSet: JWKSet { JWKSet(keys: [jwk(issuer, kid: issuerKID), jwk(rotated, kid: rotatedKID)]) }
}

/// Any JSON value, to write claims and headers a real issuer never would.
enum JSONValue: Encodable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByArrayLiteral,
    ExpressibleByFloatLiteral {
    case string(String), integer(Int), number(Double), array([JSONValue]), object([String: JSONValue]), null

    init(stringLiteral value: String) { self = .string(value) }
    init(integerLiteral value: Int) { self = .integer(value) }
    init(floatLiteral value: Double) { self = .number(value) }
    init(arrayLiteral elements: JSONValue...) { self = .array(elements) }

    func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        case .null: try container.encodeNil()
        }
    }
}

/// Mints access tokens the way the issuer does, and every way it must not.
enum TokenFactory {
    static let issuer = "https://localhost:8443"
    static let apiA = "https://localhost:8444"
    static let apiB = "https://localhost:8445"
    static let now = 1_800_000_000

    static func claims(now: Int = now, lifetime: Int = 900) -> [String: JSONValue] {
        [
            "iss": .string(issuer), "sub": "user-123", "aud": [.string(apiA), .string(apiB)],
            "exp": .integer(now + lifetime), "iat": .integer(now), "nbf": .integer(now), "jti": "token-id-1",
            "client_id": "mobile-app-001", "scope": "openid email api:serverA api:serverB", "sid": "session-1",
            "auth_time": .integer(now - 10), "email": "alice@example.com", "roles": ["user"],
        ]
    }

    static func header(kid: String? = TestKeys.issuerKID, typ: String? = "at+jwt", alg: String = "RS256") -> [String: JSONValue] {
        var header: [String: JSONValue] = ["alg": .string(alg)]
        if let kid { header["kid"] = .string(kid) }
        if let typ { header["typ"] = .string(typ) }
        return header
    }

    static func token(claims: [String: JSONValue] = claims(), header: [String: JSONValue] = header(),
                      key: RSAKey = TestKeys.issuer) -> String {
        let input = signingInput(header: header, claims: claims)
        return input + "." + Base64URL.encode(try! key.signRS256(Array(input.utf8)))
    }

    /// The issuer's own signer, typed header included.
    static func issuerToken(claims: [String: JSONValue] = claims()) -> String {
        try! JWTSigner.sign(claims, header: JWTHeader(kid: TestKeys.issuerKID, typ: "at+jwt"), key: TestKeys.issuer)
    }

    static func signingInput(header: [String: JSONValue], claims: [String: JSONValue]) -> String {
        Base64URL.encode(try! JSON.encode(header)) + "." + Base64URL.encode(try! JSON.encode(claims))
    }

    static func changing(_ name: String, to value: JSONValue?, in claims: [String: JSONValue] = claims()) -> [String: JSONValue] {
        var changed = claims
        changed[name] = value
        return changed
    }
}

/// A JWKS source with no network: answers with `result`, counts calls.
final class FakeJWKSFetcher: JWKSFetching {
    var result: Result<JWKSet, Error>
    private(set) var calls = 0

    init(_ result: Result<JWKSet, Error> = .success(TestKeys.issuerSet)) { self.result = result }

    func fetchKeySet() throws -> JWKSet {
        calls += 1
        return try result.get()
    }

    static var unreachable: Result<JWKSet, Error> { .failure(JWKSFetchError("connection refused")) }
}

final class InMemoryJWKSStore: JWKSPersisting {
    var saved: (keySet: JWKSet, savedAt: Int)?
    var clock: () -> Int
    private(set) var saves = 0

    init(saved: (keySet: JWKSet, savedAt: Int)? = nil, clock: @escaping () -> Int = { TokenFactory.now }) {
        self.saved = saved
        self.clock = clock
    }

    func load() -> (keySet: JWKSet, savedAt: Int)? { saved }
    func save(_ keySet: JWKSet) throws {
        saves += 1
        saved = (keySet, clock())
    }
}

/// A folder under the system temporary directory, removed by `remove()`.
struct TemporaryDirectory {
    let path: String

    init() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-rs-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func remove() { try? FileManager.default.removeItem(atPath: path) }
}

extension GatehouseConfig {
    static func test(home: String = "/nonexistent") -> GatehouseConfig { try! GatehouseConfig(home: home, values: [:]) }
}

/// DPoP proofs (RFC 9449 §4.2) made the way a phone makes them, and every
/// way it must not: a P-256 key of the test's, ES256.
struct ProofMaker {
    let key: ES256PrivateKey
    let jwk: ProofJWK

    init(key: ES256PrivateKey = try! ES256PrivateKey.generate()) {
        self.key = key
        self.jwk = try! key.publicJWK()
    }

    /// RFC 7638 §3: SHA-256 of the required members in lexicographic order,
    /// no whitespace; computed here, not by the code under test.
    var thumbprint: String {
        Base64URL.encode(SHA256.hash(#"{"crv":"P-256","kty":"EC","x":"\#(jwk.x!)","y":"\#(jwk.y!)"}"#))
    }

    var jwkValue: JSONValue { .object(["kty": "EC", "crv": "P-256", "x": .string(jwk.x!), "y": .string(jwk.y!)]) }

    func header(typ: String = "dpop+jwt", alg: String = "ES256", jwk: JSONValue? = nil) -> [String: JSONValue] {
        ["typ": .string(typ), "alg": .string(alg), "jwk": jwk ?? jwkValue]
    }

    func claims(method: String = "GET", uri: String = TokenFactory.apiA + "/api/data", accessToken: String?,
                iat: Int = TokenFactory.now, jti: String = UUID().uuidString, nonce: String? = nil) -> [String: JSONValue] {
        var claims: [String: JSONValue] = ["jti": .string(jti), "htm": .string(method), "htu": .string(uri), "iat": .integer(iat)]
        if let accessToken { claims["ath"] = .string(Base64URL.encode(SHA256.hash(accessToken))) }
        if let nonce { claims["nonce"] = .string(nonce) }
        return claims
    }

    func sign(header: [String: JSONValue], claims: [String: JSONValue]) -> String {
        let input = TokenFactory.signingInput(header: header, claims: claims)
        return input + "." + Base64URL.encode(try! key.sign(Array(input.utf8)))
    }

    /// A good proof for `accessToken` at `uri`, with any claim changed.
    func proof(for accessToken: String?, uri: String = TokenFactory.apiA + "/api/data", method: String = "GET",
               iat: Int = TokenFactory.now, jti: String = UUID().uuidString, nonce: String? = nil) -> String {
        sign(header: header(), claims: claims(method: method, uri: uri, accessToken: accessToken, iat: iat, jti: jti, nonce: nonce))
    }
}

extension TokenFactory {
    /// An access token bound to `thumbprint` (RFC 9449 §6.1), as the issuer mints one.
    static func boundToken(to thumbprint: String, claims: [String: JSONValue] = claims()) -> String {
        token(claims: changing("cnf", to: .object(["jkt": .string(thumbprint)]), in: claims))
    }
}

/// A replay cache in memory, for tests that need no file.
final class InMemoryDPoPReplayCache: DPoPReplayCache {
    var seen: [[UInt8]: Int64] = [:]
    func claim(_ proofHash: [UInt8], expiresAt: Int64, now: Int64) throws -> Bool {
        if let expiry = seen[proofHash], expiry > now { return false }
        seen[proofHash] = expiresAt
        return true
    }
}
