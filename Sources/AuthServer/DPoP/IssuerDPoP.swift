import IssuerStorage
import SSOCore

/// Why the issuer refused a DPoP proof, told apart from a missing nonce
/// (RFC 9449 §8), which the client fixes by retrying with the one sent.
public enum IssuerDPoPRefusal: Error, Equatable {
    case invalidProof(DPoPError)
    case nonceRequired(nonce: String, detail: String)
}

/// DPoP at the issuer: the proofs sent to the token endpoint (RFC 9449 §5)
/// and to userinfo (§7). Each is checked once (§4.3) by `DPoPProof`, then
/// against what only the server knows: its nonces (stateless, keyed, the
/// same in every process and node) and the proofs it has already accepted
/// (the shared store, so a proof replayed to another process or node is
/// refused too).
public final class IssuerDPoP {
    let storage: any IssuerStorage
    let nonces: DPoPNonces
    let nonceRequired: Bool
    let issuer: String
    let clock: Clock
    let keys = ProofKeyCache()

    public init(storage: any IssuerStorage, nonceKey: [UInt8], nonceRequired: Bool, issuer: String, clock: @escaping Clock = systemClock) {
        self.storage = storage
        nonces = DPoPNonces(key: nonceKey, purpose: "gatehouse token endpoint")
        self.nonceRequired = nonceRequired
        self.issuer = issuer
        self.clock = clock
    }

    /// The nonce to hand out now (`DPoP-Nonce`), when nonces are required.
    public var currentNonce: String? { nonceRequired ? nonces.current(now: clock()) : nil }

    /// RFC 9449 §4.3 check 1: "There is not more than one DPoP HTTP request
    /// header field." Two header fields reach us joined by a comma, which no
    /// JWT holds; nor does it hold white space.
    public static func proofHeader(_ request: Request) throws -> String? {
        guard let value = request.header("dpop") else { return nil }
        guard !value.utf8.contains(where: { $0 == UInt8(ascii: ",") || $0 == 0x20 || $0 == 0x09 }) else {
            throw IssuerDPoPRefusal.invalidProof(DPoPError(.repeated, "more than one DPoP header, or white space in it"))
        }
        return value
    }

    /// The proof sent to one of the authorization server's endpoints
    /// (`/token`, `/par`), in OAuth's error format: nil when the request
    /// carries none, which a client that must use DPoP may not do. §5 and
    /// §10.1: a refused proof is `invalid_dpop_proof`; §8: a missing or
    /// stale nonce is `use_dpop_nonce` with the nonce to use.
    public func authorizationServerProof(_ request: Request, path: String, required: Bool, clientID: String) throws -> VerifiedDPoPProof? {
        do {
            guard let proof = try proof(request, path: path) else {
                guard !required else {
                    SecurityEvents.dpopProofRejected(.missing)
                    var error = OAuthError(.invalidDPoPProof, "this client must send a DPoP proof (RFC 9449)",
                                           detail: "client \(clientID) requires DPoP; no proof")
                    error.dpopNonce = currentNonce
                    throw error
                }
                return nil
            }
            return proof
        } catch IssuerDPoPRefusal.invalidProof(let refusal) {
            SecurityEvents.dpopProofRejected(refusal.reason)
            throw OAuthError(.invalidDPoPProof, DPoPRefusalText.describe(refusal.reason), detail: "DPoP proof refused: \(refusal)")
        } catch IssuerDPoPRefusal.nonceRequired(let nonce, let detail) {
            Metrics.count(.dpopProofsRejected, "nonce")
            var error = OAuthError(.useDPoPNonce, "the DPoP proof must carry the nonce in the DPoP-Nonce header", detail: detail)
            error.dpopNonce = nonce
            throw error
        }
    }

    /// A proof sent to `path` of the issuer, or nil when the request carries
    /// none. §8: with nonces required, a proof without this server's current
    /// or previous nonce is refused with the nonce to use.
    func proof(_ request: Request, path: String) throws -> VerifiedDPoPProof? {
        guard let header = try Self.proofHeader(request) else { return nil }
        let now = clock()
        let proof = try verified(header, DPoPRequest(method: request.method, uri: issuer + path), now: now)
        if nonceRequired {
            guard let nonce = proof.nonce, nonces.isValid(nonce, now: now) else {
                throw IssuerDPoPRefusal.nonceRequired(nonce: nonces.current(now: now),
                                                      detail: proof.nonce == nil ? "proof without a nonce" : "stale or unknown nonce")
            }
        }
        try remember(proof, now: now)
        return proof
    }

    /// A proof sent with a DPoP-bound access token to one of the issuer's
    /// own resources (userinfo at `path`), `ath` included (§7).
    public func resourceProof(_ request: Request, path: String, accessToken: String) throws -> VerifiedDPoPProof {
        guard let header = try Self.proofHeader(request) else {
            throw IssuerDPoPRefusal.invalidProof(DPoPError(.missing, "the DPoP scheme without a DPoP proof"))
        }
        let now = clock()
        let proof = try verified(header, DPoPRequest(method: request.method, uri: issuer + path, accessToken: accessToken), now: now)
        try remember(proof, now: now)
        return proof
    }

    func verified(_ header: String, _ request: DPoPRequest, now: Int64) throws -> VerifiedDPoPProof {
        do { return try DPoPProof.verify(header, for: request, now: now, keys: keys) } catch let error as DPoPError {
            throw IssuerDPoPRefusal.invalidProof(error)
        }
    }

    /// §11.1: "the server MUST ... check that ... the jti value ... has not
    /// been used before" within the time a proof is accepted. Keyed by the
    /// key and the jti: one client cannot spend another's jti.
    func remember(_ proof: VerifiedDPoPProof, now: Int64) throws {
        let hash = SHA256.hash(proof.jkt + " " + proof.jti)
        let fresh = try storage.write { tx in
            try tx.dpopProofs.remember(jtiHash: hash, expiresAt: now + DPoPProof.replayWindow, now: now)
        }
        guard fresh else { throw IssuerDPoPRefusal.invalidProof(DPoPError(.replayed, "proof jti seen before")) }
    }
}
