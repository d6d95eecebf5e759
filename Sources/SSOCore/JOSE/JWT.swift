import FoundationEssentials

/// The JOSE header fields Gatehouse reads or writes.
public struct JWTHeader: Codable, Equatable, Sendable {
    public var alg: String
    public var kid: String?
    public var typ: String?
    public init(alg: String = "RS256", kid: String?, typ: String?) { self.alg = alg; self.kid = kid; self.typ = typ }
}

/// RS256 compact JWS (RFC 7515 §7.1) signing.
public enum JWTSigner {
    public static func sign<Claims: Encodable>(_ claims: Claims, header: JWTHeader, key: RSAKey) throws -> String {
        let encoder = JSON.encoder
        let signingInput = Base64URL.encode(try encoder.encode(header)) + "." + Base64URL.encode(try encoder.encode(claims))
        let signature = try key.signRS256(Array(signingInput.utf8))
        return signingInput + "." + Base64URL.encode(signature)
    }
}
