// libFuzzer target: the DPoP proof parser and checks (RFC 9449 §4.3) and
// the htu normalization, SSOCore's DPoPProof.
// Oracles: no crash, no hang; a proof that verifies names a key by a
// 43-character thumbprint, has a jti of 1-256 bytes and an iat inside the
// window; normalizing a URI twice changes nothing the second time.
import SSOCore

enum FuzzDPoP {
    /// The seeds' request and time (Tests/Fuzz/corpus/dpop-proof).
    static let request = DPoPRequest(method: "POST", uri: "https://issuer.example/token")
    static let now: Int64 = 1_800_000_000
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDPoPProof(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    if let proof = try? DPoPProof.verify(text, for: FuzzDPoP.request, now: FuzzDPoP.now) {
        precondition(proof.jkt.utf8.count == 43 && Base64URL.decode(proof.jkt)?.count == 32, "thumbprint is not a SHA-256")
        precondition((1...256).contains(proof.jti.utf8.count), "jti outside 1-256 bytes accepted")
        precondition(proof.issuedAt >= FuzzDPoP.now - DPoPProof.maximumAge && proof.issuedAt <= FuzzDPoP.now + DPoPProof.clockLeeway,
                     "iat outside the window accepted")
    }
    if let normalized = DPoPProof.normalizedURI(text) {
        precondition(DPoPProof.normalizedURI(normalized) == normalized, "normalization is not idempotent: \(text.debugDescription)")
        precondition(!normalized.contains("?") && !normalized.contains("#"), "query or fragment kept")
    }
    return 0
}
