/// The `jti`s of the DPoP proofs the issuer accepted (RFC 9449 §11.1:
/// "the server ... MUST ... check that ... the jti value ... has not been
/// used before"), shared by every responder process and node, each kept
/// only for the time a proof with it could still be accepted.
public protocol DPoPProofStore {
    /// Records `jtiHash` until `expiresAt`, in one atomic statement: true
    /// the first time, false while it is remembered. Of concurrent callers
    /// with one hash exactly one gets true.
    func remember(jtiHash: [UInt8], expiresAt: Int64, now: Int64) throws -> Bool
}
