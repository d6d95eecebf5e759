/// A public key that verifies JWS signatures of one algorithm: what a
/// verifier's key lookup hands `CompactJWT.verify`. RSA keys (the issuer's,
/// RS256) and the keys built from a DPoP proof's or a passkey's public key
/// (ES256, EdDSA, RS256) conform, so a JWKS holding EC or OKP keys needs only
/// a lookup that builds them.
public protocol JWSVerificationKey: AnyObject {
    /// The one algorithm this key verifies (RFC 8725 §3.1: a key is used
    /// with one algorithm only).
    var algorithm: JWSAlgorithm { get }
    /// Whether `signature` is this key's signature over `message`, in the
    /// JWS encoding of `algorithm`. Any failure is `false`.
    func verify(signature: [UInt8], message: [UInt8]) -> Bool
}

extension RSAKey: JWSVerificationKey {
    public var algorithm: JWSAlgorithm { .rs256 }
    public func verify(signature: [UInt8], message: [UInt8]) -> Bool { verifyRS256(signature: signature, message: message) }
}

extension ProofVerificationKey: JWSVerificationKey {}
