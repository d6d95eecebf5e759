import FoundationEssentials

/// A JWT whose signature verified under a verifier's algorithms, types and
/// keys (`CompactJWT.verify`): the only way to a token's claims. Its
/// initializer is internal to SSOCore and only the pipeline calls it, so no
/// code outside this module can read the claims of a token that was not
/// verified; the compiler, not a comment, keeps it so.
public struct VerifiedJWT {
    public let header: JWTHeader
    /// The `kid` of the key that verified the signature.
    public let kid: String
    public let algorithm: JWSAlgorithm
    let payload: [UInt8]

    init(header: JWTHeader, kid: String, algorithm: JWSAlgorithm, payload: [UInt8]) {
        self.header = header
        self.kid = kid
        self.algorithm = algorithm
        self.payload = payload
    }

    /// Decodes the claims; the caller then checks them (iss, aud, the time
    /// window with `JWTTimeWindow`, its own).
    public func claims<Claims: Decodable>(as type: Claims.Type) throws -> Claims {
        do { return try JSON.decoder.decode(type, from: Data(payload)) } catch {
            throw JWTError(.malformed, detail: "claims do not decode: \(error)")
        }
    }
}
