import FoundationEssentials
import IssuerStorage
import SSOCore

/// The issuer's policy over SSOCore's JWS pipeline (`CompactJWT.verify`)
/// for a JWT it signed itself and now sees again: its algorithms, the caller's
/// `typ`, keys from those it publishes. The pipeline refuses in jwt-kit's
/// fixed order (alg, typ, crit, key by kid, signature); this maps each
/// refusal to a `TokenRejection`. The claims are the caller's to check.
public struct IssuerSignedJWT {
    let keys: PublishedSigningKeyCache

    public init(keys: PublishedSigningKeyCache) { self.keys = keys }

    // RFC 8725 §3.1: "Libraries MUST enable the caller to specify a supported
    // set of algorithms and MUST NOT use any other algorithms". The issuer
    // signs with RS256, ES256 and EdDSA, each key with its own algorithm
    // only, so `none` and HS256 (key confusion) never pass.
    static let algorithms = IssuerSigningKey.algorithms

    /// `acceptingExpiredKeys`: see PublishedSigningKeyCache.key(kid:acceptingExpired:).
    public func verify(_ token: String, types: JWTTypes, acceptingExpiredKeys: Bool = false) throws -> VerifiedJWT {
        let jwt = try parse(token)
        do {
            // RFC 7515 §4.1.4: kid names the key. Only keys the issuer
            // publishes count; `jku`, `jwk`, `x5u` and `x5c` are ignored
            // (RFC 8725 §3.10).
            return try jwt.verify(algorithms: Self.algorithms, types: types) { kid in
                try keys.key(kid: kid, acceptingExpired: acceptingExpiredKeys)
            }
        } catch let error as JWTError {
            throw Self.rejection(error, jwt)
        }
    }

    // RFC 7519 §7.2: three base64url parts, the header a JSON object.
    func parse(_ token: String) throws -> CompactJWT {
        do { return try CompactJWT(parsing: token) } catch {
            throw TokenRejection(.malformed, "\(error)")
        }
    }

    /// A pipeline refusal as the issuer words it in its log.
    static func rejection(_ error: JWTError, _ jwt: CompactJWT) -> TokenRejection {
        switch error.code {
        case .malformed: TokenRejection(.malformed, "\(error)")
        case .criticalHeader: TokenRejection(.malformed, "crit header present")
        case .unsupportedAlgorithm: TokenRejection(.unsupportedAlgorithm, error.detail)
        case .wrongType: TokenRejection(.wrongType, error.detail)
        case .missingKeyID: TokenRejection(.unknownKey, error.detail)
        case .unknownKey: TokenRejection(.unknownKey, "kid \((jwt.header.kid ?? "").prefix(64)) not published")
        case .invalidSignature: TokenRejection(.invalidSignature, "\(error)")
        }
    }
}
