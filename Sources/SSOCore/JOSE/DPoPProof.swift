import FoundationEssentials

/// Why a DPoP proof was refused (RFC 9449 §4.3); `detail` is for the log.
public struct DPoPError: Error, Equatable, CustomStringConvertible {
    public enum Reason: String, CaseIterable, Sendable {
        case missing, repeated, malformed, wrongType, unsupportedAlgorithm, badKey, privateKeyIncluded, badSignature
        case wrongMethod, wrongURI, stale, missingAccessTokenHash, wrongAccessTokenHash, replayed, wrongKey
    }
    public let reason: Reason
    public let detail: String
    public init(_ reason: Reason, _ detail: String) { self.reason = reason; self.detail = detail }
    public var description: String { "\(reason.rawValue): \(detail)" }
}

/// A proof's `jwk` header member: a public key only (RFC 9449 §4.2).
/// Private members are decoded only to refuse them (§4.3 check 7).
public struct ProofJWK: Codable, Equatable, Sendable {
    public var kty: String
    public var crv: String?
    public var x: String?
    public var y: String?
    public var n: String?
    public var e: String?
    var d: String? = nil, p: String? = nil, q: String? = nil, dp: String? = nil, dq: String? = nil, qi: String? = nil, k: String? = nil

    public init(kty: String, crv: String? = nil, x: String? = nil, y: String? = nil, n: String? = nil, e: String? = nil) {
        self.kty = kty
        self.crv = crv
        self.x = x
        self.y = y
        self.n = n
        self.e = e
    }

    var hasPrivateMembers: Bool { [d, p, q, dp, dq, qi, k].contains { $0 != nil } }

    enum CodingKeys: String, CodingKey { case kty, crv, x, y, n, e, d, p, q, dp, dq, qi, k }
}

/// What a verified proof says, for the caller's own checks: the key's
/// thumbprint (what tokens are bound to), the `jti` to remember, the
/// `nonce` to check against its own.
public struct VerifiedDPoPProof: Equatable, Sendable {
    /// RFC 7638 JWK SHA-256 thumbprint, base64url: `cnf.jkt` (§6.1).
    public let jkt: String
    public let jti: String
    public let issuedAt: Int64
    public let nonce: String?
}

/// What the request a proof arrived with was.
public struct DPoPRequest: Sendable {
    public let method: String
    /// The request's URI as the server is reached (scheme, host, port, path).
    public let uri: String
    /// The access token presented with it, at a resource (§7): `ath`.
    public let accessToken: String?

    public init(method: String, uri: String, accessToken: String? = nil) {
        self.method = method
        self.uri = uri
        self.accessToken = accessToken
    }
}

/// DPoP proof JWTs (RFC 9449 §4): parsed and checked in §4.3's order,
/// except the two checks that need the server's state (an unused `jti`,
/// the server's nonce), which the caller makes with what this returns.
///
/// The one JWS path outside `CompactJWT.verify`, on purpose: a proof
/// carries its key in its own header (`jwk`, which the pipeline never
/// reads, RFC 8725 §3.10), has no `kid`, and is refused in §4.3's order,
/// whose check 3 (required claims) precedes the signature, with DPoP's own
/// error per check. Its claims are decoded with the header, but nothing in
/// them is relied on before check 6 verifies the signature. It shares the
/// algorithm set (`JWSAlgorithm`) and the keys (`JWSVerificationKey`).
public enum DPoPProof {
    /// A proof is a few hundred bytes; anything near a cookie's size is not one.
    public static let maximumLength = 8 * 1024
    /// The largest RSA proof key (RS256) accepted.
    public static let largestRSAKeyBits = 4096
    /// §11.1: "the server MUST ... only accept DPoP proofs for a limited
    /// time after their creation": issued at most this long ago...
    public static let maximumAge: Int64 = 120
    /// ... or this far ahead (a phone's clock runs fast).
    public static let clockLeeway: Int64 = 60
    /// How long a `jti` must be remembered to refuse every replay: a proof
    /// claimed at t with an `iat` of t + 60 still passes at t + 180, and a
    /// row whose `expires_at` has come counts as expired in that second.
    public static let replayWindow: Int64 = maximumAge + clockLeeway + 1
    /// The algorithms a proof may be signed with here (§4.3 check 5: "an
    /// asymmetric digital signature algorithm ... not none, ... supported by
    /// the application"): ES256 (P-256, what the Secure Enclave and
    /// StrongBox hold), EdDSA (Ed25519) and RS256 (2048 bits or more),
    /// strongest-and-cheapest first.
    public static let algorithms: [JWSAlgorithm] = [.es256, .edDSA, .rs256]
    /// The advertised list (discovery, `WWW-Authenticate: DPoP algs=`).
    public static let supportedAlgorithms = algorithms.map(\.rawValue)

    struct Header: Decodable {
        let typ: String?
        let alg: String?
        let jwk: ProofJWK?
    }

    struct Claims: Decodable {
        let jti: String?
        let htm: String?
        let htu: String?
        let iat: Double?
        let ath: String?
        let nonce: String?
    }

    /// §4.3 checks 2-9, 11 and 12's `ath`, in order. The DPoP header value
    /// itself (check 1: exactly one) is the caller's, who has the headers.
    /// `keys`: where a process keeps the keys it has built from proofs'
    /// `jwk`s, so a client's every request does not pay for building its
    /// key again (nil: build it each time).
    public static func verify(_ proof: String, for request: DPoPRequest, now: Int64, keys: ProofKeyCache? = nil) throws -> VerifiedDPoPProof {
        // Check 2: "the DPoP HTTP request header value is a single and
        // well-formed JWT".
        let bytes = Array(proof.utf8)
        guard !bytes.isEmpty, bytes.count <= maximumLength else { throw DPoPError(.malformed, "proof of \(bytes.count) bytes") }
        let parts = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = Base64URL.decode(bytes: parts[0]), let payload = Base64URL.decode(bytes: parts[1]),
              let signature = Base64URL.decode(bytes: parts[2]) else { throw DPoPError(.malformed, "not a compact JWS") }
        guard let header = try? JSON.decoder.decode(Header.self, from: Data(headerBytes)),
              let claims = try? JSON.decoder.decode(Claims.self, from: Data(payload)) else {
            throw DPoPError(.malformed, "header or claims are not JSON objects of the right types")
        }
        // Check 3: "all required claims per Section 4.2 are contained in the JWT".
        guard let typ = header.typ, let alg = header.alg, let jwk = header.jwk, let jti = claims.jti, let htm = claims.htm,
              let htu = claims.htu, let iat = claims.iat else { throw DPoPError(.malformed, "a required header member or claim is missing") }
        guard (1...256).contains(jti.utf8.count) else { throw DPoPError(.malformed, "jti of \(jti.utf8.count) bytes") }
        // Check 4: "the typ JOSE Header Parameter has the value dpop+jwt".
        guard typ == "dpop+jwt" else { throw DPoPError(.wrongType, "typ \(typ.prefix(32))") }
        // Check 5: "the alg JOSE Header Parameter indicates a registered
        // asymmetric digital signature algorithm ..., is not none, is
        // supported by the application, and is acceptable per local policy".
        guard let algorithm = JWSAlgorithm(rawValue: alg), algorithms.contains(algorithm) else {
            throw DPoPError(.unsupportedAlgorithm, "alg \(alg.prefix(16))")
        }
        // Check 7: "the jwk JOSE Header Parameter does not contain a private key".
        guard !jwk.hasPrivateMembers else { throw DPoPError(.privateKeyIncluded, "jwk holds private members") }
        // Check 6: "the JWT signature verifies with the public key contained
        // in the jwk JOSE Header Parameter".
        let (key, thumbprint) = try keys?.key(jwk, for: algorithm) ?? publicKey(jwk, for: algorithm)
        let signingInput = Array(bytes[parts[0].startIndex..<parts[1].endIndex])
        guard key.verify(signature: signature, message: signingInput) else { throw DPoPError(.badSignature, "\(alg) signature does not verify") }
        // Check 8: "the htm claim matches the HTTP method of the current request".
        guard htm.bytesEqual(request.method) else { throw DPoPError(.wrongMethod, "htm \(htm.prefix(16)) for \(request.method)") }
        // Check 9: "the htu claim matches the HTTP URI value for the HTTP
        // request in which the JWT was received, ignoring any query and
        // fragment parts"; compared after RFC 3986 §6.2.2-6.2.3 normalization.
        guard let presented = normalizedURI(htu), let expected = normalizedURI(request.uri), presented.bytesEqual(expected) else {
            throw DPoPError(.wrongURI, "htu does not name \(request.uri)")
        }
        // Check 11: "the creation time of the JWT ... is within an acceptable window".
        // Int64(exactly:) is nil for NaN, infinities and values beyond
        // Int64 (1e300), which Int64(_:) would trap on.
        guard let issuedAt = Int64(exactly: iat.rounded(.down)) else { throw DPoPError(.malformed, "iat is not a usable number") }
        guard issuedAt >= now - maximumAge, issuedAt <= now + clockLeeway else { throw DPoPError(.stale, "iat \(issuedAt), now \(now)") }
        // Check 12 (§7): "the value of the ath claim equals the hash of that access token".
        if let accessToken = request.accessToken {
            guard let ath = claims.ath else { throw DPoPError(.missingAccessTokenHash, "no ath with an access token") }
            guard ath.bytesEqual(accessTokenHash(accessToken)) else { throw DPoPError(.wrongAccessTokenHash, "ath does not hash this access token") }
        }
        return VerifiedDPoPProof(jkt: thumbprint, jti: jti, issuedAt: issuedAt, nonce: claims.nonce)
    }

    /// §4.2 ath: "base64url encoding of the SHA-256 hash of the ASCII
    /// encoding of the associated access token's value".
    public static func accessTokenHash(_ accessToken: String) -> String { Base64URL.encode(SHA256.hash(accessToken)) }

    /// The key a proof names, and its RFC 7638 thumbprint, computed from the
    /// key's canonical members (re-encoded from their bytes, so two
    /// spellings of one key have one thumbprint).
    static func publicKey(_ jwk: ProofJWK, for algorithm: JWSAlgorithm) throws -> (any JWSVerificationKey, String) {
        func decoded(_ member: String?, _ name: String) throws -> [UInt8] {
            guard let member, let bytes = Base64URL.decode(member), !bytes.isEmpty else { throw DPoPError(.badKey, "jwk \(name) missing or not base64url") }
            return bytes
        }
        do {
            switch (algorithm, jwk.kty, jwk.crv) {
            case (.es256, "EC", "P-256"?):
                let x = try decoded(jwk.x, "x"), y = try decoded(jwk.y, "y")
                let key = try ProofVerificationKey.p256(x: x, y: y)
                return (key, thumbprint(#"{"crv":"P-256","kty":"EC","x":"\#(Base64URL.encode(x))","y":"\#(Base64URL.encode(y))"}"#))
            case (.edDSA, "OKP", "Ed25519"?):
                let x = try decoded(jwk.x, "x")
                let key = try ProofVerificationKey.ed25519(x: x)
                return (key, thumbprint(#"{"crv":"Ed25519","kty":"OKP","x":"\#(Base64URL.encode(x))"}"#))
            case (.rs256, "RSA", nil), (.ps256, "RSA", nil):
                let n = try decoded(jwk.n, "n"), e = try decoded(jwk.e, "e")
                let key = try RSAKey.publicKey(modulus: n, exponent: e)
                let (modulus, exponent) = try key.publicComponents()
                // Anyone may send a proof with a new key to /token, so what a
                // key costs to verify is bounded: a phone's RSA key is 2048
                // to 4096 bits with e = 65537; 8192 bits and a 64-bit e took
                // milliseconds.
                guard key.bits <= Self.largestRSAKeyBits, exponent.count <= 4 else {
                    throw DPoPError(.badKey, "jwk is an RSA key over \(Self.largestRSAKeyBits) bits or with an exponent over 32 bits")
                }
                let thumbprint = thumbprint(#"{"e":"\#(Base64URL.encode(exponent))","kty":"RSA","n":"\#(Base64URL.encode(modulus))"}"#)
                return (algorithm == .ps256 ? RSAPSSVerificationKey(key) : key, thumbprint)
            default:
                throw DPoPError(.badKey, "jwk kty \(jwk.kty.prefix(8)) / crv \(jwk.crv?.prefix(16) ?? "none") does not fit alg \(algorithm.rawValue)")
            }
        } catch let error as DPoPError {
            throw error
        } catch {
            throw DPoPError(.badKey, "jwk is not a usable \(algorithm.rawValue) key")
        }
    }

    static func thumbprint(_ canonical: String) -> String { Base64URL.encode(SHA256.hash(canonical)) }

    /// scheme://host[:port]/path with scheme and host in ASCII lower case, the
    /// scheme's default port dropped, an empty path as "/", and query and
    /// fragment removed; nil for anything that is not an absolute http(s) URI.
    public static func normalizedURI(_ uri: String) -> String? {
        var text = Substring(uri)
        if let end = text.firstIndex(where: { $0 == "?" || $0 == "#" }) { text = text[..<end] }
        guard let colon = text.firstIndex(of: ":"), text[colon...].hasPrefix("://") else { return nil }
        let scheme = text[..<colon].asciiLowercased()
        guard scheme == "https" || scheme == "http" else { return nil }
        let rest = text[text.index(colon, offsetBy: 3)...]
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        guard let (host, port) = hostAndPort(rest[..<slash]) else { return nil }
        let path = rest[slash...]
        let defaultPort = scheme == "https" ? 443 : 80
        let authority = host.asciiLowercased() + (port == nil || port == defaultPort ? "" : ":\(port!)")
        return scheme + "://" + authority + (path.isEmpty ? "/" : String(path))
    }

    /// RFC 3986 §3.2: authority = [ userinfo "@" ] host [ ":" port ], where
    /// host is an IP-literal in brackets or a reg-name (unreserved,
    /// pct-encoded, sub-delims: no ":"), and port = *DIGIT. No userinfo
    /// here (an htu never names a user), and anything else, such as
    /// `host:8443:443`, is not an authority: it used to lose its last
    /// `:443` and pass for `host:8443`. An empty port is the default
    /// (§6.2.3); a port is a number up to 65535.
    static func hostAndPort(_ authority: Substring) -> (host: Substring, port: Int?)? {
        let host: Substring, portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            host = authority[...close]
            let after = authority[authority.index(after: close)...]
            guard after.isEmpty || after.hasPrefix(":") else { return nil }
            portText = after.isEmpty ? nil : after.dropFirst()
            guard host.dropFirst().dropLast().utf8.allSatisfy({ isRegNameByte($0) || $0 == UInt8(ascii: ":") }) else { return nil }
        } else {
            let parts = authority.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            host = parts[0]
            portText = parts.count == 2 ? parts[1] : nil
            guard host.utf8.allSatisfy(isRegNameByte) else { return nil }
        }
        guard !host.isEmpty else { return nil }
        guard let portText, !portText.isEmpty else { return (host, nil) }
        guard portText.utf8.count <= 5, portText.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
              let port = Int(portText), (1...65535).contains(port) else { return nil }
        return (host, port)
    }

    /// unreserved / pct-encoded ("%" and hex digits) / sub-delims (RFC 3986 §2).
    static func isRegNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        default: Array("-._~%!$&'()*+,;=".utf8).contains(byte)
        }
    }
}


extension ProofJWK {
    /// The key this JWK describes, for `algorithm`, by a DPoP proof key's
    /// rules (kty and crv fit the algorithm; RSA at most 4096 bits with a
    /// 32-bit exponent): also how an upstream provider's JWKS members are read.
    public func verificationKey(for algorithm: JWSAlgorithm) throws -> any JWSVerificationKey {
        try DPoPProof.publicKey(self, for: algorithm).0
    }
}
