import ArgumentParser
import Foundation
import OutboundHTTPS
import SSOCore

struct LoginCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "login",
        abstract: "Sign in through the browser (authorization code + PKCE, loopback redirect) and store the tokens.",
        discussion: """
            Prints the authorize URL on standard output (or opens it with --open), waits for the browser to come \
            back to http://127.0.0.1:<random port>/callback, checks state and iss (RFC 9207), exchanges the code, \
            checks the ID token (signature against the JWKS, iss, aud, exp, nonce) and stores the tokens. \
            The client must have a loopback redirect URI registered, e.g. http://127.0.0.1/callback (any port matches). \
            Tokens are DPoP-bound (RFC 9449) to a P-256 key made for this sign-in and stored with them: dpop_jkt \
            at /authorize, a proof with every token request; --no-dpop asks for bearer tokens instead.
            """)

    enum Presentation: EnumerableFlag {
        case print, open

        static func help(for value: Presentation) -> ArgumentHelp? {
            switch value {
            case .print: "Print the authorize URL on standard output (default)."
            case .open: "Open the authorize URL with xdg-open."
            }
        }
    }

    @Option(help: ArgumentHelp("The issuer, e.g. https://localhost:8443.", valueName: "url")) var issuer: String
    @Option(help: ArgumentHelp("The client_id of a public native client.", valueName: "id")) var clientID: String
    @Option(help: "The scopes to ask for (space-separated).") var scope = "openid profile email offline_access api:serverA api:serverB"
    @Option(help: ArgumentHelp("The redirect URI's path; the client must have http://127.0.0.1<path> registered.", valueName: "path"))
    var callbackPath = "/callback"
    @Option(help: ArgumentHelp("Seconds to wait for the browser.", valueName: "seconds")) var timeout: Double = 300
    @Option(help: ArgumentHelp("OIDC prompt parameter (login, none).", valueName: "value")) var prompt: String?
    @Flag var presentation: Presentation = .print
    @Flag(name: .customLong("no-dpop"), help: "Get bearer tokens: no DPoP key, no proofs (DPoP, RFC 9449, is the default).")
    var noDPoP = false
    @OptionGroup var options: StoreOptions

    func validate() throws {
        guard callbackPath.hasPrefix("/"), !callbackPath.contains("?"), !callbackPath.contains("#") else {
            throw ValidationError("--callback-path must start with / and have no query or fragment")
        }
        guard timeout > 0 else { throw ValidationError("--timeout must be positive") }
    }

    func run() throws {
        let issuer = ProviderMetadata.normalizedIssuer(issuer)
        let caFile = options.caFile.map(absolutePath)
        let transport = HTTPSTransport(caFile: caFile)
        let metadata = try ProviderMetadata.fetch(issuer: issuer, transport: transport)
        let dpop = try DPoPClient.forSignIn(metadata: metadata, disabled: noDPoP)

        let listener = try LoopbackListener()
        let attempt = AuthorizationAttempt(clientID: clientID, dpop: dpop, redirectURI: "http://127.0.0.1:\(listener.port)\(callbackPath)",
                                           scope: scope, prompt: prompt)
        let url = try PushedAuthorization.browserURL(for: attempt, metadata: metadata, transport: transport)
        switch presentation {
        case .print:
            Console.output(url)
            Console.error("Open the URL above in a browser to sign in.")
        case .open:
            Browser.open(url)
        }
        Console.error("Waiting for the browser at \(attempt.redirectURI) (up to \(Int(timeout)) s)...")

        let deadline = MonotonicDeadline(seconds: timeout)
        while let connection = try listener.accept(before: deadline) {
            guard let request = connection.readRequest() else { continue }
            guard request.path == callbackPath else {
                connection.respond(status: 404, reason: "Not Found", html: CallbackPage.notFound)
                continue
            }
            guard request.method == "GET" else {
                connection.respond(status: 405, reason: "Method Not Allowed", html: CallbackPage.notFound, extraHeaders: ["Allow: GET"])
                continue
            }
            do {
                let tokens = try complete(attempt, query: request.query, metadata: metadata, transport: transport, caFile: caFile)
                connection.respond(status: 200, reason: "OK", html: CallbackPage.signedIn(as: tokens.email ?? tokens.subject))
                Console.error("Signed in as \(tokens.email ?? tokens.subject ?? "?") at \(issuer); tokens stored in \(options.store) (mode 0600).")
                Console.error("Access token expires \(Redaction.time(tokens.accessTokenExpiresAt)); "
                              + (tokens.refreshToken == nil ? "no refresh token (ask for offline_access)." : "refresh token stored."))
                if let dpop = attempt.dpop, tokens.isDPoPBound {
                    Console.error("The tokens are DPoP-bound to this sign-in's key (thumbprint \(dpop.signer.thumbprint)), kept in the token file.")
                }
                return
            } catch let error as ToolError {
                connection.respond(status: 400, reason: "Bad Request", html: CallbackPage.failed("The sign-in could not be completed."))
                throw error
            }
        }
        throw ToolError("timed out after \(Int(timeout)) s waiting for the browser to return to \(attempt.redirectURI)")
    }

    /// From the browser's callback to stored tokens: every check passes
    /// before the code is used, and nothing is stored unless all of them do.
    func complete(_ attempt: AuthorizationAttempt, query: String, metadata: ProviderMetadata, transport: HTTPSTransport,
                  caFile: String?) throws -> StoredTokens {
        let code = try AuthorizationCallback.code(fromQuery: query, attempt: attempt, issuer: metadata.issuer,
                                                  issRequired: metadata.authorizationResponseIssParameterSupported == true)
        let client = IssuerClient(transport: transport, clientID: clientID, dpop: attempt.dpop)
        let response = try client.exchange(code: code, redirectURI: attempt.redirectURI, codeVerifier: attempt.codeVerifier,
                                           tokenEndpoint: metadata.tokenEndpoint)
        guard let idToken = response.idToken else { throw ToolError("the token response has no ID token (was openid in the scope?)") }
        let validator = IDTokenValidator(issuer: metadata.issuer, clientID: clientID, jwksURI: metadata.jwksURI, transport: transport)
        let claims = try validator.validate(idToken, expecting: .codeExchange(nonce: attempt.nonce))
        let now = Date()
        var tokens = StoredTokens(
            issuer: metadata.issuer, clientID: clientID, caFile: caFile, tokenEndpoint: metadata.tokenEndpoint, jwksURI: metadata.jwksURI,
            revocationEndpoint: metadata.revocationEndpoint, endSessionEndpoint: metadata.endSessionEndpoint, scope: attempt.scope,
            accessToken: response.accessToken, accessTokenExpiresAt: 0, refreshToken: nil, idToken: nil,
            subject: claims.sub, email: claims.email, signedInAt: Int64(now.timeIntervalSince1970), refreshedAt: nil)
        tokens.take(response, now: now)
        tokens.dpopKey = try attempt.dpop?.keyPEM()
        tokens.dpopNonce = attempt.dpop?.tokenEndpointNonce
        try options.tokenFile.save(tokens)
        return tokens
    }
}
