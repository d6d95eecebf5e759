import ArgumentParser
import Foundation

struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show what is stored: issuer, client, expiry, and the tokens' claims (decoded, not verified).")

    @Flag(help: "Print the tokens in full (they are secrets: mind your terminal and its scrollback).") var showTokens = false
    @OptionGroup var options: StoreOptions

    func run() throws {
        let file = options.tokenFile
        let tokens = try file.load()
        let show = { (token: String?) in showTokens ? (token ?? "(none)") : Redaction.preview(token) }
        var lines = [
            "token file     \(file.path)",
            "issuer         \(tokens.issuer)",
            "client         \(tokens.clientID)",
            "CA file        \(tokens.caFile ?? "(system trust store)")",
            "user           \(tokens.email ?? "-") (sub \(tokens.subject ?? "-"))",
            "scope          \(tokens.scope ?? "-")",
            "signed in      \(Redaction.time(tokens.signedInAt))",
            "refreshed      \(tokens.refreshedAt.map { Redaction.time($0) } ?? "never")",
            "access token   \(show(tokens.accessToken))",
            "  type         \(tokens.tokenType ?? "Bearer")\(tokens.isDPoPBound ? " (sent with a DPoP proof)" : "")",
            "  expires      \(Redaction.time(tokens.accessTokenExpiresAt))\(tokens.accessTokenExpired(margin: 0) ? "  EXPIRED" : "")",
            "refresh token  \(show(tokens.refreshToken))",
            "ID token       \(show(tokens.idToken))",
            "DPoP key       \(Self.describeKey(tokens.dpopKey))",
        ]
        if let jwt = try? UnverifiedJWT(tokens.accessToken) {
            lines.append("access token header (not verified here; the APIs verify it):")
            lines.append(UnverifiedJWT.prettyJSON(jwt.header))
            lines.append("access token claims:")
            lines.append(UnverifiedJWT.prettyJSON(jwt.claims))
        }
        if let idToken = tokens.idToken, let jwt = try? UnverifiedJWT(idToken) {
            lines.append("ID token claims (verified at sign-in or refresh):")
            lines.append(UnverifiedJWT.prettyJSON(jwt.claims))
        }
        Console.output(lines.joined(separator: "\n"))
    }

    /// The key's thumbprint (what `cnf.jkt` holds), never the key itself.
    static func describeKey(_ pem: String?) -> String {
        guard let pem else { return "(none: bearer tokens)" }
        guard let dpop = try? DPoPClient.stored(keyPEM: pem, tokenEndpointNonce: nil) else { return "(unreadable)" }
        return "ES256, thumbprint \(dpop.signer.thumbprint) (the private key stays in the token file)"
    }
}
