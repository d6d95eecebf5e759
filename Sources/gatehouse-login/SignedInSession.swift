import Foundation
import OutboundHTTPS
import SSOCore

/// The stored sign-in, and what the commands after `login` do with it.
final class SignedInSession {
    let file: TokenFile
    private(set) var tokens: StoredTokens
    let transport: HTTPSTransport
    /// The sign-in's DPoP key, when it has one.
    let dpop: DPoPClient?

    init(options: StoreOptions) throws {
        file = options.tokenFile
        let tokens = try file.load()
        self.tokens = tokens
        // An explicit --ca-file wins over the one remembered at login.
        transport = HTTPSTransport(caFile: options.caFile.map(absolutePath) ?? tokens.caFile)
        dpop = try tokens.dpopKey.map { try DPoPClient.stored(keyPEM: $0, tokenEndpointNonce: tokens.dpopNonce) }
    }

    var issuerClient: IssuerClient { IssuerClient(transport: transport, clientID: tokens.clientID, dpop: dpop) }

    /// GET a protected resource with the access token: RFC 9449 §7.1's DPoP
    /// scheme and a proof for a bound token, RFC 6750 §2.1's Bearer otherwise.
    func get(_ url: String) throws -> HTTPSResponse {
        guard tokens.isDPoPBound else {
            return try transport.get(url, headers: [("Authorization", "Bearer \(tokens.accessToken)")])
        }
        guard let dpop else { throw ToolError("the stored access token is DPoP-bound but the token file has no DPoP key; sign in again") }
        return try dpop.resourceRequest(url, accessToken: tokens.accessToken, transport: transport)
    }

    /// RFC 6749 §6 with rotation: the new refresh token is stored before
    /// anything else happens, since the old one is spent the moment the
    /// issuer answered.
    func refresh() throws {
        guard let refreshToken = tokens.refreshToken else {
            throw ToolError("no refresh token stored (was offline_access granted?); sign in again with `gatehouse-login login`")
        }
        let response = try issuerClient.refresh(refreshToken: refreshToken, tokenEndpoint: tokens.tokenEndpoint)
        var updated = tokens
        updated.take(response)
        updated.refreshedAt = Int64(Date().timeIntervalSince1970)
        updated.dpopNonce = dpop?.tokenEndpointNonce
        // Saved first, validated after: a spent refresh token is useless, and
        // losing the new one would sign the user out.
        try file.save(updated)
        tokens = updated
        if let idToken = response.idToken {
            let validator = IDTokenValidator(issuer: tokens.issuer, clientID: tokens.clientID, jwksURI: tokens.jwksURI, transport: transport)
            _ = try validator.validate(idToken, expecting: .refresh(subject: tokens.subject))
        }
    }
}

/// Paths are remembered absolute, so the next command works from any directory.
func absolutePath(_ path: String) -> String {
    path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
}
