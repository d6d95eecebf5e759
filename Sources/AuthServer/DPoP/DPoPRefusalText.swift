import SSOCore

/// What a client may be told about its own refused DPoP proof: which check
/// failed, never a value (the log line has the detail).
public enum DPoPRefusalText {
    public static func describe(_ reason: DPoPError.Reason) -> String {
        switch reason {
        case .missing: "a DPoP proof is required"
        case .repeated: "send exactly one DPoP header"
        case .malformed: "the DPoP proof is not a well-formed JWT with jti, htm, htu and iat"
        case .wrongType: "the DPoP proof's typ must be dpop+jwt"
        case .unsupportedAlgorithm: "the DPoP proof's alg is not one of " + DPoPProof.supportedAlgorithms.joined(separator: ", ")
        case .badKey: "the DPoP proof's jwk is not a usable public key for its alg"
        case .privateKeyIncluded: "the DPoP proof's jwk holds a private key"
        case .badSignature: "the DPoP proof's signature does not verify"
        case .wrongMethod: "the DPoP proof's htm is not this request's method"
        case .wrongURI: "the DPoP proof's htu is not this request's URI"
        case .stale: "the DPoP proof's iat is outside the accepted window"
        case .missingAccessTokenHash: "the DPoP proof has no ath for the access token"
        case .wrongAccessTokenHash: "the DPoP proof's ath does not match the access token"
        case .replayed: "the DPoP proof was used before"
        case .wrongKey: "the DPoP proof is signed by another key than the token is bound to"
        }
    }
}
