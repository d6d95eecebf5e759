import FoundationEssentials

/// The JOSE header fields Gatehouse reads or writes.
public struct JWTHeader: Codable, Equatable, Sendable {
    public var alg: String
    public var kid: String?
    public var typ: String?
    public init(alg: String = "RS256", kid: String?, typ: String?) { self.alg = alg; self.kid = kid; self.typ = typ }
}

/// Compact JWS (RFC 7515 §7.1) signing: RS256, ES256 or EdDSA with the issuer's keys,
/// ES256 for DPoP proofs and Sign in with Apple's client secret.
public enum JWTSigner {
    public static func sign<Claims: Encodable>(_ claims: Claims, header: JWTHeader, key: RSAKey) throws -> String {
        try sign(claims, header: header) { try key.signRS256($0) }
    }

    /// With one of the issuer's keys: `alg` is the key's algorithm.
    public static func sign<Claims: Encodable>(_ claims: Claims, kid: String, typ: String?, key: IssuerSigningKey) throws -> String {
        try sign(claims, header: JWTHeader(alg: key.algorithm.rawValue, kid: kid, typ: typ)) { try key.sign($0) }
    }

    /// ES256; `header` is the caller's own (a DPoP proof's carries its `jwk`).
    public static func sign<Header: Encodable, Claims: Encodable>(_ claims: Claims, header: Header, key: ES256PrivateKey) throws -> String {
        try sign(claims, header: header) { try key.sign($0) }
    }

    static func sign<Header: Encodable, Claims: Encodable>(_ claims: Claims, header: Header,
                                                           signature: ([UInt8]) throws -> [UInt8]) throws -> String {
        let signingInput = Base64URL.encode(try JSON.encode(header)) + "." + Base64URL.encode(try JSON.encode(claims))
        return signingInput + "." + Base64URL.encode(try signature(Array(signingInput.utf8)))
    }
}
