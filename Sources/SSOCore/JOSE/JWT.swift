import FoundationEssentials

public struct JWTError: Error, CustomStringConvertible {
    public enum Code: String, Sendable {
        case malformed, unsupportedAlgorithm, wrongType, unknownKey, invalidSignature
    }
    public let code: Code
    /// Log-only detail; never sent to a client.
    public let detail: String
    public init(_ code: Code, detail: String) { self.code = code; self.detail = detail }
    public var description: String { "\(code.rawValue): \(detail)" }
}

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

/// A compact JWS split into its parts, verified before its claims are read.
///
/// The order is fixed, as in jwt-kit: parse the header, pin the algorithm,
/// find the key by `kid`, check the signature, and only then decode claims.
public struct CompactJWT {
    /// Tokens longer than this are refused before any parsing work.
    public static let maximumLength = 16 * 1024

    public let header: JWTHeader
    public let signingInput: [UInt8]
    public let signature: [UInt8]
    public let payload: [UInt8]

    public init(parsing token: String) throws {
        // Split on bytes, not Characters: grapheme breaking costs more than
        // the rest of parsing, and a JWS is ASCII (RFC 7515 §7.1).
        let bytes = Array(token.utf8)
        guard bytes.count <= Self.maximumLength else { throw JWTError(.malformed, detail: "token too long") }
        let parts = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw JWTError(.malformed, detail: "expected three parts") }
        guard let headerBytes = Base64URL.decode(bytes: parts[0]),
              let payloadBytes = Base64URL.decode(bytes: parts[1]),
              let signatureBytes = Base64URL.decode(bytes: parts[2]) else { throw JWTError(.malformed, detail: "bad base64url") }
        guard let header = try? JSON.decoder.decode(JWTHeader.self, from: Data(headerBytes)) else {
            throw JWTError(.malformed, detail: "bad header JSON")
        }
        self.header = header
        self.payload = payloadBytes
        self.signature = signatureBytes
        self.signingInput = Array(bytes[parts[0].startIndex..<parts[1].endIndex])
    }

    /// RFC 8725 §3.1: the algorithm is pinned by the verifier, never taken
    /// from the token; `none` and HS256 are refused here.
    public func verifyRS256(keyFor: (String) -> RSAKey?) throws {
        guard header.alg == "RS256" else { throw JWTError(.unsupportedAlgorithm, detail: "alg \(header.alg)") }
        guard let kid = header.kid, let key = keyFor(kid) else { throw JWTError(.unknownKey, detail: "kid not in JWKS") }
        guard key.verifyRS256(signature: signature, message: signingInput) else {
            throw JWTError(.invalidSignature, detail: "RS256 signature does not verify")
        }
    }

    /// RFC 7515 §4.1.11: "If any of the listed extension Header Parameters
    /// are not understood and supported by the recipient, then the JWS is
    /// invalid." Gatehouse understands none, so every verifier refuses a
    /// token with `crit` of any JSON type; nil when the header cannot be
    /// read again (it was read once, so only a damaged copy could).
    public func hasCriticalHeader() -> Bool? {
        let encodedHeader = signingInput.prefix { $0 != UInt8(ascii: ".") }
        guard let headerBytes = Base64URL.decode(bytes: encodedHeader),
              let header = try? JSON.decoder.decode(CriticalHeader.self, from: Data(headerBytes)) else { return nil }
        return header.crit != nil
    }

    struct CriticalHeader: Decodable {
        let crit: AnyJSONValue?
    }

    /// Decodes any JSON value, so that a member's mere presence counts.
    struct AnyJSONValue: Decodable {
        init(from decoder: Decoder) throws {}
    }

    /// Decodes the claims. Call only after `verifyRS256`.
    public func claims<Claims: Decodable>(as type: Claims.Type) throws -> Claims {
        do { return try JSON.decoder.decode(type, from: Data(payload)) } catch {
            throw JWTError(.malformed, detail: "claims do not decode: \(error)")
        }
    }
}
