import ArgumentParser

struct LogoutCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "logout",
        abstract: "Revoke the tokens, end the SSO session, delete the token file.",
        discussion: """
            Revokes the refresh token (RFC 7009; the issuer revokes its whole family) and the access token, \
            ends the SSO session named by the ID token (RP-Initiated Logout, sent directly with id_token_hint; \
            the browser's session cookie stops working, and so do other apps' tokens of that session), then deletes \
            the token file. With --keep-session only this tool's tokens are revoked.
            """)

    @Flag(help: "Revoke this tool's tokens only; leave the SSO session (and the browser's sign-in) alive.") var keepSession = false
    @OptionGroup var options: StoreOptions

    func run() throws {
        let session = try SignedInSession(options: options)
        let tokens = session.tokens
        let client = session.issuerClient
        var done: [String] = []
        if let endpoint = tokens.revocationEndpoint {
            if let refreshToken = tokens.refreshToken {
                try client.revoke(refreshToken, hint: "refresh_token", revocationEndpoint: endpoint)
                done.append("refresh token revoked")
            }
            try client.revoke(tokens.accessToken, hint: "access_token", revocationEndpoint: endpoint)
            done.append("access token revoked")
        } else {
            Console.error("gatehouse-login: warning: the issuer has no revocation endpoint; the tokens stay valid until they expire")
        }
        if !keepSession, let idToken = tokens.idToken, let endpoint = tokens.endSessionEndpoint {
            try client.endSession(idTokenHint: idToken, endSessionEndpoint: endpoint)
            done.append("SSO session ended")
        }
        try session.file.delete()
        done.append("\(session.file.path) deleted")
        Console.error("Signed out: " + done.joined(separator: ", ") + ".")
    }
}
