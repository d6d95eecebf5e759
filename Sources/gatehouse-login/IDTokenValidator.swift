import Foundation
import OutboundHTTPS
import SSOCore

/// OIDC Core §3.1.3.7 for the ID token of a code exchange, and §12.2 for the
/// one of a refresh: a policy over SSOCore's JWS pipeline (`CompactJWT.verify`),
/// so the order is jwt-kit's: alg, typ, crit, the key by `kid`, the
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

    // §3.1.3.7 step 6 / RFC 8725 §3.1: the algorithms are ours to pin: the
    // issuer's (discovery's id_token_signing_alg_values_supported), each key
    // verifying its own algorithm only (JWK.verificationKey).
    static let algorithms: [JWSAlgorithm] = [.rs256, .es256, .edDSA]
    // RFC 8725 §3.11: explicit typing keeps one kind of JWT from passing
    // for another: an access token (at+jwt), a logout token
    // (logout+jwt) or a DPoP proof is not an ID token, whose typ is
    // JWT when present (OIDC Core leaves it optional).
    static let types = JWTTypes.ifPresent(["JWT"], allowingApplicationPrefix: false)

    /// SSOCore's JWS pipeline with this client's policy (RS256, ES256 or EdDSA, typ JWT if
    /// any, no `crit`, the key by kid from the issuer's JWKS, fetched only
    /// once the header passed), then the claim checks.
    func validate(_ token: String, expecting expectation: Expectation, now: Date = Date()) throws -> IDTokenClaims {
        let jwt: CompactJWT
        do { jwt = try CompactJWT(parsing: token) } catch { throw ToolError("ID token: not a JWS (\(error))") }
        let verified: VerifiedJWT
        do {
            verified = try jwt.verify(algorithms: Self.algorithms, types: Self.types) { kid in
                try fetchKeys().first { $0.kid == kid }?.verificationKey()
            }
        } catch let error as JWTError {
            throw refusal(error, jwt)
        }
        let claims: IDTokenClaims
        do { claims = try verified.claims(as: IDTokenClaims.self) } catch { throw ToolError("ID token: claims missing or malformed") }
        try check(claims, expecting: expectation, now: Int64(now.timeIntervalSince1970))
        return claims
    }

    func refusal(_ error: JWTError, _ jwt: CompactJWT) -> ToolError {
        switch error.code {
        case .malformed:
            ToolError("ID token: not a JWS (\(error))")
        // RFC 7515 §4.1.11: a critical extension this client does not
        // understand (it understands none) makes the JWS invalid.
        case .criticalHeader:
            ToolError("ID token: critical header parameters (crit) are not supported; refused")
        case .wrongType:
            ToolError("ID token: typ is \((jwt.header.typ ?? "").prefix(32)), not JWT; refused")
        case .unsupportedAlgorithm, .unknownKey, .invalidSignature:
            ToolError("ID token: signature check against \(jwksURI) failed (\(error.code.rawValue))")
        case .missingKeyID:
            ToolError("ID token: signature check against \(jwksURI) failed (\(JWTError.Code.unknownKey.rawValue))")
        }
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
        // Step 10: iat in the future means a clock or a token is wrong.
        let window = JWTTimeWindow(leeway: Double(Self.leeway))
        switch window.violation(expiresAt: Double(claims.exp), notBefore: nil, issuedAt: Double(claims.iat), now: Double(now)) {
        case nil: break
        case .expired?: throw ToolError("ID token: expired")
        case .notYetValid?, .issuedInFuture?: throw ToolError("ID token: issued in the future (check the clock)")
        }
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
