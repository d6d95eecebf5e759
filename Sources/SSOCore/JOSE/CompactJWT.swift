import FoundationEssentials

/// A compact JWS split into its parts, and the one verification pipeline
/// every JWT Gatehouse relies on goes through: the issuer's own tokens
/// presented back to it, access tokens at the resource servers, ID tokens at
/// gatehouse-login. Each of those is a policy over `verify`: which
/// algorithms, which `typ`, where keys come from, then its own claim checks.
///
/// The claims are not reachable from here: only a `VerifiedJWT`, which only
/// `verify` makes, has `claims(as:)`. (DPoP proofs, whose key is in their
/// own header, are checked in RFC 9449 §4.3's order by `DPoPProof.verify`.)
public struct CompactJWT {
    /// Tokens longer than this are refused before any parsing work.
    public static let maximumLength = 16 * 1024

    public let header: JWTHeader
    /// Whether the header has a `crit` member, of any JSON type (null
    /// included): read in the one header decode, refused by `verify`.
    let hasCriticalHeader: Bool
    let signingInput: [UInt8]
    let signature: [UInt8]
    let payload: [UInt8]

    // RFC 7519 §7.2: "Verify that the JWT contains at least one period" ...
    // "base64url decode the encoded representation of the JOSE Header" ...
    // "Verify that the resulting octet sequence is ... a completely valid
    // JSON object".
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
        guard let decoded = try? JSON.decoder.decode(DecodedHeader.self, from: Data(headerBytes)) else {
            throw JWTError(.malformed, detail: "bad header JSON")
        }
        self.header = decoded.header
        self.hasCriticalHeader = decoded.hasCriticalHeader
        self.payload = payloadBytes
        self.signature = signatureBytes
        self.signingInput = Array(bytes[parts[0].startIndex..<parts[1].endIndex])
    }

    /// The `iss` claim before any verification, for one use only: finding
    /// whose keys may verify the token (RFC 7523 §3: a client assertion
    /// names its client in `iss`, whose registered keys then verify it).
    /// Nothing else of the payload is reachable unverified.
    public var unverifiedIssuer: String? {
        struct Issuer: Decodable { let iss: String? }
        return (try? JSON.decoder.decode(Issuer.self, from: Data(payload)))?.iss
    }

    /// The verification pipeline, in a fixed order as in jwt-kit: the
    /// algorithm, the type, critical extensions, the key by `kid`, the
    /// signature; the claims only afterwards, from the `VerifiedJWT`, with
    /// the caller's typed checks (`JWTTimeWindow` for exp, nbf, iat).
    ///
    /// - algorithms: the caller's supported set (never `none` or HMAC:
    ///   `JWSAlgorithm` has no such case).
    /// - types: the `typ` values the caller accepts.
    /// - keys: the key a `kid` names, from the caller's trusted source only,
    ///   or nil. Errors it throws pass through unchanged.
    ///
    /// Throws `JWTError` with the step that refused in its code.
    public func verify(algorithms: [JWSAlgorithm], types: JWTTypes,
                       keys: (String) throws -> (any JWSVerificationKey)?) throws -> VerifiedJWT {
        let algorithm = try pinnedAlgorithm(algorithms)
        try checkType(types)
        try checkCriticalHeaders()
        let (kid, key) = try signingKey(for: algorithm, keys)
        try checkSignature(key)
        return VerifiedJWT(header: header, kid: kid, algorithm: algorithm, payload: payload)
    }

    // RFC 8725 §3.1: "Libraries MUST enable the caller to specify a supported
    // set of algorithms and MUST NOT use any other algorithms when performing
    // cryptographic operations." The token's `alg` only selects within it.
    func pinnedAlgorithm(_ algorithms: [JWSAlgorithm]) throws -> JWSAlgorithm {
        guard let algorithm = JWSAlgorithm(rawValue: header.alg), algorithms.contains(algorithm) else {
            throw JWTError(.unsupportedAlgorithm, detail: "alg \(header.alg.prefix(16))")
        }
        return algorithm
    }

    // RFC 8725 §3.11: "the use of explicit typing ... prevent[s] confusion
    // between different kinds of JWTs" (JWTTypes compares per RFC 7515 §4.1.9).
    func checkType(_ types: JWTTypes) throws {
        guard types.accepts(header.typ) else {
            throw JWTError(.wrongType, detail: "typ \(header.typ.map { String($0.prefix(32)) } ?? "absent")")
        }
    }

    // RFC 7515 §4.1.11: "If any of the listed extension Header Parameters are
    // not understood and supported by the recipient, then the JWS is invalid."
    // Gatehouse understands no extension, so any `crit`, of any JSON type, is
    // refused. After alg and typ: the order the resource servers document.
    func checkCriticalHeaders() throws {
        guard !hasCriticalHeader else { throw JWTError(.criticalHeader, detail: "crit present") }
    }

    // RFC 7515 §4.1.4: "The "kid" (key ID) Header Parameter is a hint
    // indicating which key was used to secure the JWS." The key comes from
    // the caller's source only: `jku`, `jwk`, `x5u` and `x5c` are never read
    // (RFC 8725 §3.10). A key is used with its own algorithm only.
    func signingKey(for algorithm: JWSAlgorithm,
                    _ keys: (String) throws -> (any JWSVerificationKey)?) throws -> (String, any JWSVerificationKey) {
        guard let kid = header.kid, !kid.isEmpty else { throw JWTError(.missingKeyID, detail: "no kid") }
        guard let key = try keys(kid) else { throw JWTError(.unknownKey, detail: "kid \(kid.prefix(64)) unknown") }
        guard key.algorithm == algorithm else {
            throw JWTError(.invalidSignature, detail: "kid names a \(key.algorithm.rawValue) key, alg is \(algorithm.rawValue)")
        }
        return (kid, key)
    }

    // RFC 7515 §5.2 step 8: "Validate the JWS Signature against the JWS
    // Signing Input ... in the manner defined for the algorithm being used".
    func checkSignature(_ key: any JWSVerificationKey) throws {
        guard key.verify(signature: signature, message: signingInput) else {
            throw JWTError(.invalidSignature, detail: "\(key.algorithm.rawValue) signature does not verify")
        }
    }

    /// The header read once: the members Gatehouse uses, and whether `crit`
    /// is present at all (`decodeIfPresent` would take `"crit": null` for
    /// absent).
    struct DecodedHeader: Decodable {
        let header: JWTHeader
        let hasCriticalHeader: Bool

        enum CodingKeys: String, CodingKey { case alg, kid, typ, crit }

        init(from decoder: Decoder) throws {
            let members = try decoder.container(keyedBy: CodingKeys.self)
            header = JWTHeader(alg: try members.decode(String.self, forKey: .alg),
                               kid: try members.decodeIfPresent(String.self, forKey: .kid),
                               typ: try members.decodeIfPresent(String.self, forKey: .typ))
            hasCriticalHeader = members.contains(.crit)
        }
    }
}
