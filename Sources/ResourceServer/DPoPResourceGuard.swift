import SSOCore

/// What a resource server checks on top of the token for a request made
/// with `Authorization: DPoP` (RFC 9449 §7.1): one DPoP header, a proof
/// that passes §4.3 for this request and this token (`ath`), this server's
/// nonce when it asks for one (§9), the key the token is bound to, and a
/// `jti` not used before (§11.1). Each check is its own function, in that
/// order; the token's own checks come first (`AccessTokenValidator`).
///
/// The proof is verified on every request, never cached: its signature,
/// freshness and `jti` are what make the token useless to whoever copies it.
public final class DPoPResourceGuard {
    /// This resource as its clients reach it: its origin and path, the only
    /// `htu` accepted (RFC 9449 §4.3 check 9).
    public let resourceURI: String
    let policy: AccessTokenPolicy
    let replayCache: DPoPReplayCache
    /// nil: no nonce is required (the default; `GATEHOUSE_API_DPOP_NONCE`).
    let nonces: DPoPNonces?
    let keys = ProofKeyCache()

    public init(policy: AccessTokenPolicy, path: String, replayCache: DPoPReplayCache, nonces: DPoPNonces? = nil) {
        self.policy = policy
        self.resourceURI = policy.audience + path
        self.replayCache = replayCache
        self.nonces = nonces
    }

    /// The nonce to send as `DPoP-Nonce` now, when nonces are required.
    public func currentNonce(now: Int) -> String? { nonces?.current(now: Int64(now)) }

    /// Throws a `BearerError` in the DPoP scheme unless the request proves
    /// possession of the key `claims` (already verified) is bound to.
    public func check(token: String, claims: AccessTokenClaims, proofHeader: String?, method: String, now: Int) throws {
        let boundKey = try boundKey(claims)
        let proof = try singleProof(proofHeader)
        let verified = try verifyProof(proof, method: method, token: token, now: now)
        try checkNonce(verified, now: now)
        try checkKey(verified, boundKey: boundKey)
        try claimJTI(verified, now: now)
    }

    func error(_ code: BearerError.Code, _ description: String, detail: String) -> BearerError {
        policy.error(code, description, detail: detail, scheme: .dpop)
    }

    // RFC 9449 §6.1: a DPoP-bound token carries "cnf": {"jkt": ...}. The
    // DPoP scheme is for such tokens; a bearer token is sent as Bearer.
    func boundKey(_ claims: AccessTokenClaims) throws -> String {
        guard let thumbprint = claims.confirmation?.jwkThumbprint else {
            throw error(.tokenNotDPoPBound, "the access token is not bound to a DPoP key: send it as Authorization: Bearer",
                        detail: "no cnf.jkt under DPoP")
        }
        return thumbprint
    }

    // RFC 9449 §7.1: "a resource server MUST check that a DPoP proof was also
    // received in the DPoP header field". §4.3 check 1: "there is not more
    // than one DPoP HTTP request header field". Two header lines arrive
    // combined with a comma (SSOCore FastCGIServer), a character no compact
    // JWS contains.
    func singleProof(_ header: String?) throws -> String {
        guard let header, !header.isEmpty else {
            Metrics.count(.dpopProofsRejected, DPoPError.Reason.missing.metricLabel)
            throw error(.invalidDPoPProof, "a DPoP proof is required in the DPoP header with Authorization: DPoP",
                        detail: "no DPoP header")
        }
        guard !header.contains(",") else {
            Metrics.count(.dpopProofsRejected, DPoPError.Reason.repeated.metricLabel)
            throw error(.invalidDPoPProof, "send exactly one DPoP header holding one proof", detail: "DPoP header repeated or a list")
        }
        return header
    }

    // RFC 9449 §4.3 checks 2-9 and 11, and §7: "The DPoP proof MUST include
    // the ath claim with a valid hash of the associated access token."
    func verifyProof(_ proof: String, method: String, token: String, now: Int) throws -> VerifiedDPoPProof {
        do {
            return try DPoPProof.verify(proof, for: DPoPRequest(method: method, uri: resourceURI, accessToken: token), now: Int64(now),
                                        keys: keys)
        } catch let refused as DPoPError {
            Metrics.count(.dpopProofsRejected, refused.reason.metricLabel)
            throw error(.invalidDPoPProof, Self.explanation(refused.reason, resourceURI: resourceURI), detail: refused.description)
        }
    }

    // RFC 9449 §4.3 check 10: "if the server provided a nonce value to the
    // client, the nonce claim matches the server-provided nonce value". §9:
    // resource servers "provide the nonce using the DPoP-Nonce header in the
    // same way that authorization servers do", answering 401 with
    // `WWW-Authenticate: DPoP error="use_dpop_nonce"`. §11.3: "A server MUST
    // NOT accept any DPoP proofs without the nonce claim when a DPoP nonce
    // has been provided to the client." Nonces are stateless and keyed
    // (DPoPNonces): one handed out by any process is good at all of them.
    func checkNonce(_ proof: VerifiedDPoPProof, now: Int) throws {
        guard let nonces else { return }
        guard let nonce = proof.nonce else {
            Metrics.count(.dpopProofsRejected, "nonce")
            throw error(.useDPoPNonce, "this resource server requires a nonce in the DPoP proof: use the DPoP-Nonce header's value",
                        detail: "no nonce")
        }
        guard nonces.isValid(nonce, now: Int64(now)) else {
            Metrics.count(.dpopProofsRejected, "nonce")
            throw error(.useDPoPNonce, "the DPoP proof's nonce is not current: use the DPoP-Nonce header's value",
                        detail: "nonce not issued here or expired")
        }
    }

    // RFC 9449 §4.3 check 12: "the public key to which the access token is
    // bound matches the public key from the DPoP proof". §7.1: "The resource
    // server MUST NOT grant access to the resource unless all checks are
    // successful." Thumbprints are base64url text, compared as bytes.
    func checkKey(_ proof: VerifiedDPoPProof, boundKey: String) throws {
        guard ConstantTime.equals(Array(proof.jkt.utf8), Array(boundKey.utf8)) else {
            Metrics.count(.dpopProofsRejected, DPoPError.Reason.wrongKey.metricLabel)
            throw error(.dpopKeyMismatch, "the DPoP proof is not signed with the key the access token is bound to",
                        detail: "proof jkt \(proof.jkt.prefix(43)) is not cnf.jkt")
        }
    }

    // RFC 9449 §11.1: "In the context of the target URI, servers can store
    // the jti value of each DPoP proof for the time window in which the
    // respective DPoP proof JWT would be accepted to prevent multiple uses of
    // the same DPoP proof. HTTP requests to the same URI for which the jti
    // value has been seen before would be declined." And: "a server that is
    // tracking jti values should reject DPoP proof JWTs with unnecessarily
    // large jti values or store only a hash thereof" (DPoPProof caps a jti
    // at 256 bytes; only the hash is stored). Last, so a refused request
    // spends no jti. The window: a proof issued up to `clockLeeway` ahead
    // stays acceptable until `maximumAge` after its iat.
    func claimJTI(_ proof: VerifiedDPoPProof, now: Int) throws {
        let hash = Self.proofHash(resourceURI: resourceURI, jkt: proof.jkt, jti: proof.jti)
        guard try replayCache.claim(hash, expiresAt: Int64(now) + DPoPProof.replayWindow, now: Int64(now)) else {
            Metrics.count(.dpopProofsRejected, DPoPError.Reason.replayed.metricLabel)
            throw error(.invalidDPoPProof, "the DPoP proof has been used before: make a new proof (new jti) for every request",
                        detail: "jti replayed")
        }
    }

    /// SHA-256 over the URI, the key's thumbprint and the jti, separated by
    /// NUL bytes: neither of the first two can hold one, so no two triples
    /// hash the same bytes, whatever the jti holds.
    static func proofHash(resourceURI: String, jkt: String, jti: String) -> [UInt8] {
        SHA256.hash(Array(resourceURI.utf8) + [0] + Array(jkt.utf8) + [0] + Array(jti.utf8))
    }

    /// What the client is told for each refusal of `DPoPProof.verify`.
    static func explanation(_ reason: DPoPError.Reason, resourceURI: String) -> String {
        switch reason {
        case .missing: "a DPoP proof is required in the DPoP header with Authorization: DPoP"
        case .repeated: "send exactly one DPoP header holding one proof"
        case .malformed: "the DPoP proof is not a compact JWS with typ, alg, jwk, jti, htm, htu and iat"
        case .wrongType: "the DPoP proof's typ is not dpop+jwt"
        case .unsupportedAlgorithm: "the DPoP proof's alg is not one of \(BearerError.dpopAlgorithms)"
        case .badKey: "the DPoP proof's jwk is not a public key for its alg"
        case .privateKeyIncluded: "the DPoP proof's jwk contains private key members"
        case .badSignature: "the DPoP proof's signature does not verify with its jwk"
        case .wrongMethod: "the DPoP proof's htm is not the method of this request"
        case .wrongURI: "the DPoP proof's htu is not \(resourceURI)"
        case .stale: "the DPoP proof's iat is too old or too far ahead (\(DPoPProof.maximumAge) s back, \(DPoPProof.clockLeeway) s ahead)"
        case .missingAccessTokenHash: "the DPoP proof has no ath (the hash of the access token)"
        case .wrongAccessTokenHash: "the DPoP proof's ath is not the hash of this access token"
        case .replayed: "the DPoP proof has been used before: make a new proof (new jti) for every request"
        case .wrongKey: "the DPoP proof is not signed with the key the access token is bound to"
        }
    }
}
