import Foundation
import OutboundHTTPS
import SSOCore

/// This sign-in's DPoP key (RFC 9449) and what it does with it: a proof on
/// every token request (§5) and on every call with a bound access token
/// (§7, with `ath`), and the one retry a server's `use_dpop_nonce` asks
/// for (§8 at the token endpoint, §9 at a resource server).
///
/// The key is made at `login`, one per stored sign-in, and kept as PEM in
/// the token file (mode 0600) beside the tokens it binds; it is never
/// printed. A phone keeps its key in the Secure Enclave or StrongBox instead.
final class DPoPClient {
    let signer: DPoPProofSigner
    /// The token endpoint's latest `DPoP-Nonce` (§8.2: "The server MAY
    /// supply a new nonce value in every response"); stored with the tokens.
    private(set) var tokenEndpointNonce: String?
    /// Resource servers' nonces by origin (§9), for this process only.
    private var resourceNonces: [String: String] = [:]

    init(signer: DPoPProofSigner, tokenEndpointNonce: String?) {
        self.signer = signer
        self.tokenEndpointNonce = tokenEndpointNonce
    }

    /// A new P-256 key for a new sign-in.
    static func generate() throws -> DPoPClient {
        do { return DPoPClient(signer: try DPoPProofSigner(key: try ES256PrivateKey.generate()), tokenEndpointNonce: nil) } catch {
            throw ToolError("cannot make a DPoP key: \(error)")
        }
    }

    /// The key for a new sign-in: DPoP unless `--no-dpop` says otherwise
    /// or the issuer does not take ES256 proofs (then bearer tokens, said so).
    static func forSignIn(metadata: ProviderMetadata, disabled: Bool) throws -> DPoPClient? {
        if disabled { return nil }
        guard metadata.acceptsES256Proofs else {
            Console.error("The issuer does not list ES256 in dpop_signing_alg_values_supported; signing in with bearer tokens.")
            return nil
        }
        return try generate()
    }

    /// The key stored with a sign-in.
    static func stored(keyPEM: String, tokenEndpointNonce: String?) throws -> DPoPClient {
        do {
            let key = try ES256PrivateKey.privateKey(pem: Array(keyPEM.utf8))
            return DPoPClient(signer: try DPoPProofSigner(key: key), tokenEndpointNonce: tokenEndpointNonce)
        } catch {
            throw ToolError("the token file's DPoP key is not a P-256 private key; sign in again with `gatehouse-login login`")
        }
    }

    func keyPEM() throws -> String { String(decoding: try signer.key.privateKeyPEM(), as: UTF8.self) }

    /// §5: `POST` to the token endpoint with a proof; with the nonce the
    /// endpoint asks for, once, if it asks.
    func tokenRequest(_ endpoint: String, _ form: [(String, String)], transport: HTTPSTransport) throws -> HTTPSResponse {
        var nonce = tokenEndpointNonce
        defer { tokenEndpointNonce = nonce }
        return try withNonce(&nonce) { nonce in
            let proof = try self.proof("POST", endpoint, nonce: nonce)
            return try transport.send(.form(endpoint, form, headers: [("DPoP", proof)]))
        }
    }

    /// §7.1: `Authorization: DPoP <token>` and a proof whose `ath` hashes
    /// that token; with the resource server's nonce, once, if it asks.
    func resourceRequest(_ url: String, accessToken: String, transport: HTTPSTransport) throws -> HTTPSResponse {
        let origin = HTTPSRequest(url: url).origin ?? url
        var nonce = resourceNonces[origin]
        defer { resourceNonces[origin] = nonce }
        return try withNonce(&nonce) { nonce in
            let proof = try self.proof("GET", url, nonce: nonce, accessToken: accessToken)
            return try transport.get(url, headers: [("Authorization", "DPoP \(accessToken)"), ("DPoP", proof)])
        }
    }

    /// Sends, keeps the newest `DPoP-Nonce` of the answer, and sends again
    /// once when the answer is `use_dpop_nonce` with a nonce not yet tried.
    private func withNonce(_ nonce: inout String?, _ send: (String?) throws -> HTTPSResponse) throws -> HTTPSResponse {
        let sent = nonce
        let reply = try send(sent)
        if let offered = reply.headers["dpop-nonce"] { nonce = offered }
        guard Self.asksForNonce(reply), nonce != sent else { return reply }
        let retried = try send(nonce)
        if let offered = retried.headers["dpop-nonce"] { nonce = offered }
        return retried
    }

    /// §8 (token endpoint: 400 and the error in the JSON body) and §9
    /// (resource server: 401 and the error in `WWW-Authenticate: DPoP`):
    /// `use_dpop_nonce`, with the nonce in `DPoP-Nonce`.
    static func asksForNonce(_ reply: HTTPSResponse) -> Bool {
        guard reply.status == 400 || reply.status == 401, reply.headers["dpop-nonce"] != nil else { return false }
        if let challenge = reply.headers["www-authenticate"], challenge.contains("error=\"use_dpop_nonce\"") { return true }
        return (try? reply.decode(OAuthErrorBody.self, what: ""))?.error == "use_dpop_nonce"
    }

    private func proof(_ method: String, _ url: String, nonce: String?, accessToken: String? = nil) throws -> String {
        do { return try signer.proof(method: method, uri: url, nonce: nonce, accessToken: accessToken, now: Int64(Date().timeIntervalSince1970)) }
        catch { throw ToolError("cannot sign a DPoP proof: \(error)") }
    }
}
