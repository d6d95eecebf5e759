import Foundation
import SSOCore

/// OIDC Core §3.1.3.7 for the ID token of a code exchange, and §12.2 for the
/// one of a refresh. The order is jwt-kit's: the key by `kid`, the RS256
/// signature, and only then the claims, with the current time passed in.
struct IDTokenValidator {
    let issuer: String
    let clientID: String
    let jwksURI: String
    let transport: HTTPSTransport
    /// Clock skew tolerated on exp and iat.
    static let leeway: Int64 = 60

    enum Expectation {
        /// §3.1.3.7 step 11: the nonce sent at /authorize must come back.
        case codeExchange(nonce: String)
        /// §12.2: same subject as the stored ID token; no nonce is required.
        case refresh(subject: String?)
    }

    func validate(_ token: String, expecting expectation: Expectation, now: Date = Date()) throws -> IDTokenClaims {
        let jwt: CompactJWT
        do { jwt = try CompactJWT(parsing: token) } catch { throw ToolError("ID token: not a JWS (\(error))") }
        // §3.1.3.7 step 6 / RFC 8725 §3.1: the algorithm is ours to pin (RS256, as discovery says).
        // RFC 7515 §4.1.11: a critical extension this client does not
        // understand (it understands none) makes the JWS invalid.
        guard jwt.hasCriticalHeader() == false else { throw ToolError("ID token: critical header parameters (crit) are not supported; refused") }
        // RFC 8725 §3.11: explicit typing keeps one kind of JWT from passing
        // for another: an access token (at+jwt), a logout token
        // (logout+jwt) or a DPoP proof is not an ID token, whose typ is
        // JWT when present (OIDC Core leaves it optional).
        if let type = jwt.header.typ, type.lowercased() != "jwt" {
            throw ToolError("ID token: typ is \(type.prefix(32)), not JWT; refused")
        }
        let keys = try fetchKeys()
        do {
            try jwt.verifyRS256 { kid in keys.first { $0.kid == kid }.flatMap { try? $0.publicKey() } }
        } catch let error as JWTError {
            throw ToolError("ID token: signature check against \(jwksURI) failed (\(error.code.rawValue))")
        }
        let claims: IDTokenClaims
        do { claims = try jwt.claims(as: IDTokenClaims.self) } catch { throw ToolError("ID token: claims missing or malformed") }
        try check(claims, expecting: expectation, now: Int64(now.timeIntervalSince1970))
        return claims
    }

    func check(_ claims: IDTokenClaims, expecting expectation: Expectation, now: Int64) throws {
        // Step 2: "The Issuer Identifier ... MUST exactly match the value of the iss (issuer) Claim."
        guard claims.iss == issuer else { throw ToolError("ID token: iss is \(claims.iss), not \(issuer)") }
        // Step 3: "MUST reject the ID Token if it does not list the Client as a valid audience".
        guard claims.aud.values.contains(clientID) else { throw ToolError("ID token: aud does not name \(clientID)") }
        // Steps 4-5: with several audiences, azp must be this client.
        if claims.aud.values.count > 1 || claims.azp != nil, claims.azp != clientID {
            throw ToolError("ID token: azp does not name \(clientID)")
        }
        // Step 9: "The current time MUST be before the time represented by the exp Claim".
        guard claims.exp + Self.leeway > now else { throw ToolError("ID token: expired") }
        // Step 10: iat in the future means a clock or a token is wrong.
        guard claims.iat <= now + Self.leeway else { throw ToolError("ID token: issued in the future (check the clock)") }
        switch expectation {
        case .codeExchange(let nonce):
            guard let received = claims.nonce, ConstantTime.equals(Array(received.utf8), Array(nonce.utf8)) else {
                throw ToolError("ID token: nonce missing or not the one this sign-in sent; refused")
            }
        case .refresh(let subject):
            // §12.2: "its sub Claim Value MUST be the same as in the ID Token issued when the original authentication occurred".
            if let subject, claims.sub != subject { throw ToolError("ID token: the refresh answered for another subject") }
        }
    }

    private func fetchKeys() throws -> [JWK] {
        let reply = try transport.get(jwksURI)
        guard reply.status == 200 else { throw ToolError("JWKS: \(jwksURI) answered HTTP \(reply.status)") }
        // A key of another type (an EC key, say) must not make the whole set unreadable.
        struct TolerantSet: Decodable {
            struct Entry: Decodable {
                let key: JWK?
                init(from decoder: Decoder) throws { key = try? JWK(from: decoder) }
            }
            let keys: [Entry]
        }
        return try reply.decode(TolerantSet.self, what: "JWKS").keys.compactMap(\.key)
            .filter { $0.kty == "RSA" && ($0.use == nil || $0.use == "sig") }
    }
}
