import IssuerStorage
import SSOCore

/// What DPoP binds at the token endpoint, and the check a bound credential
/// makes when it comes back.
public enum DPoPBinding {
    /// RFC 9449 §10: a code whose authorization request carried `dpop_jkt`
    /// ("the authorization server ... MUST bind the authorization code to
    /// the key"), and §5: a refresh token "bound to the public key" of a
    /// public client, are accepted only with a proof by that very key.
    /// Without a proof the client is told to send one; with another key's
    /// proof the credential is not valid for it (invalid_grant), and since
    /// this runs inside the write unit, nothing is spent or revoked.
    public static func check(presented: String?, boundTo bound: String?, what: String) throws {
        guard let bound else { return }
        guard let presented else {
            SecurityEvents.dpopProofRejected(.missing)
            throw OAuthError(.invalidDPoPProof, "this \(what) is bound to a DPoP key: send a proof signed with it",
                             detail: "DPoP-bound \(what) presented without a proof")
        }
        guard presented.bytesEqual(bound) else {
            SecurityEvents.dpopProofRejected(.wrongKey)
            throw OAuthError.invalidGrant("the DPoP proof's key is not the one this \(what) is bound to",
                                          detail: "DPoP-bound \(what) presented with another key's proof")
        }
    }

    /// RFC 9449 §5: "Refresh tokens issued to confidential clients are not
    /// bound to the DPoP proof's public key because they are already
    /// sender-constrained with a different existing mechanism"; a public
    /// client's are.
    public static func refreshTokenKey(_ jkt: String?, client: Client) -> String? {
        client.isConfidential ? nil : jkt
    }
}
