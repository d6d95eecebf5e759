import ArgumentParser
import Foundation
import AuthServer
import IssuerStorage

struct ClientCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "client", abstract: "Register, change, delete and list OAuth clients; show and configure native SSO groups.",
        subcommands: [Add.self, Update.self, Secret.self, Delete.self, List.self, RegistrationToken.self, ClientGroupCommand.self])

    /// How a confidential client authenticates, and its keys.
    struct AuthenticationOptions: ParsableArguments {
        @Option(name: .customLong("auth-method"), help: """
            client_secret_basic, client_secret_post, private_key_jwt or none (default: either secret method with a secret, \
            none without).
            """) var authMethod: String?
        @Option(name: .customLong("jwks-file"), help: """
            private_key_jwt and request objects: a file holding the client's public keys as a JWK Set (readable by the home's owner, whom ssoctl \
            becomes when run as root).
            """)
        var jwksFile: String?
        @Option(name: .customLong("jwks-uri"), help: "private_key_jwt and request objects: where the issuer fetches the client's JWK Set (https).")
        var jwksURI: String?
        @Flag(name: .customLong("require-signed-request-object"), inversion: .prefixedNo, help: """
            Authorization requests only as request objects signed with the client's keys (RFC 9101); needs --jwks-file or \
            --jwks-uri.
            """) var requireSignedRequestObject: Bool?
        @Option(name: .customLong("id-token-alg"), help: """
            The algorithm of the client's ID, access and logout tokens: RS256 (the default), ES256 or EdDSA (a key of it must \
            exist: ssoctl keys rotate --alg).
            """) var idTokenAlgorithm: String?
        @Option(name: .customLong("profile"), help: """
            fapi2: hold the client to the FAPI 2.0 Security Profile (PAR, PKCE S256, DPoP-bound tokens, private_key_jwt \
            with PS256, ES256 or EdDSA, --id-token-alg ES256 or EdDSA); none removes it.
            """) var profile: String?

        /// The JWK Set the file holds, as text.
        func jwks() throws -> String? {
            guard let jwksFile else { return nil }
            guard let data = FileManager.default.contents(atPath: jwksFile) else { throw ArgumentParser.ValidationError("cannot read \(jwksFile)") }
            return String(decoding: data, as: UTF8.self)
        }
    }

    /// The app behind a client, for the association files.
    struct AppOptions: ParsableArguments {
        @Option(name: .customLong("ios-app-id"), help: "The iOS app: TEAMID.bundle.id (listed in apple-app-site-association).")
        var iosAppID: String?
        @Option(help: "The Android app's package (listed in assetlinks.json).") var androidPackage: String?
        @Option(name: .customLong("android-cert-fingerprint"), help: "SHA-256 of the Android app's signing certificate, AA:BB:… (repeatable).")
        var androidCertificateFingerprints: [String] = []
    }

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Register a client. Public (no secret) unless --secret-stdin is given, which makes it confidential (client_secret_basic).")
        @Argument(help: "The client_id.") var clientID: String
        @Option(name: .customLong("name"), help: """
            What people see the app called: the login page, the sign-out confirmation and the account page show it instead of \
            the client_id (1 to 64 characters, no control characters).
            """) var displayName: String?
        @Option(name: .customLong("redirect-uri"), help: "A redirect URI, matched exactly (repeatable; one at least for a sign-in client).")
        var redirectURIs: [String] = []
        @Option(name: .customLong("post-logout-redirect-uri"), help: "A post-logout redirect URI (repeatable).") var postLogoutRedirectURIs: [String] = []
        @Option(name: .customLong("scope"), help: "A scope the client may ask for (repeatable; default: openid).") var scopes: [String] = []
        @Option(help: "Native SSO group: clients of one group share sign-in on a device.") var nativeSSOGroup: String?
        @Flag(help: "Read a client secret from standard input.") var secretStdin = false
        @Option(name: .customLong("grant"), help: """
            A grant type: authorization_code, refresh_token, client_credentials (repeatable; default: authorization_code and \
            refresh_token). client_credentials alone makes a machine client: confidential, API scopes only, no redirect URI.
            """) var grantTypes: [String] = []
        @Flag(name: .customLong("require-dpop"), help: "Token requests must carry a DPoP proof (RFC 9449).") var requireDPoP = false
        @Flag(name: .customLong("require-par"), help: "Authorization requests must be pushed first (RFC 9126).") var requirePAR = false
        @Option(name: .customLong("access-token-ttl"), help: "Access token lifetime in seconds (at most the issuer's).") var accessTokenTTL: Int?
        @Option(name: .customLong("refresh-token-ttl"), help: "Refresh token lifetime in seconds (at most the issuer's).") var refreshTokenTTL: Int?
        @OptionGroup var app: AppOptions
        @Option(name: .customLong("backchannel-logout-uri"), help: """
            Where to POST a logout token when a session the client was issued tokens in ends \
            (OpenID Connect Back-Channel Logout 1.0; an absolute https URI, no fragment).
            """) var backchannelLogoutURI: String?
        @OptionGroup var authentication: AuthenticationOptions

        func run() throws {
            let secret = secretStdin ? readSecretLine("client secret") : nil
            let jwks = try authentication.jwks()
            let context = try Context.open()
            let client = attempt {
                try context.clients.add(ClientRegistration(
                    clientID: clientID, redirectURIs: redirectURIs, postLogoutRedirectURIs: postLogoutRedirectURIs, scopes: scopes,
                    nativeSSOGroup: nativeSSOGroup, secret: secret, grantTypes: grantTypes, requireDPoP: requireDPoP, requirePAR: requirePAR,
                    accessTokenLifetime: accessTokenTTL, refreshTokenLifetime: refreshTokenTTL, iosAppID: app.iosAppID,
                    androidPackage: app.androidPackage, androidCertificateFingerprints: app.androidCertificateFingerprints,
                    displayName: displayName, backchannelLogoutURI: backchannelLogoutURI, authMethod: authentication.authMethod,
                    jwks: jwks, jwksURI: authentication.jwksURI,
                    requireSignedRequestObject: authentication.requireSignedRequestObject ?? false,
                    idTokenAlgorithm: authentication.idTokenAlgorithm, profile: authentication.profile))
            }
            AdminAudit.changed("client add", target: client.clientID, client: client.clientID)
            context.refreshAppLinkFiles()
            print("added \(client.isConfidential ? "confidential" : "public") client \(client.clientID)")
        }
    }

    struct Update: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change a client's settings; running responders use them at once.",
            discussion: "The result must satisfy what `client add` requires, or nothing changes.")
        @Argument(help: "The client_id.") var clientID: String
        @Option(name: .customLong("name"), help: "The name the pages show instead of the client_id; \"\" removes it.")
        var displayName: String?
        @Option(name: .customLong("add-redirect-uri"), help: "Add a redirect URI (repeatable).") var addRedirectURIs: [String] = []
        @Option(name: .customLong("remove-redirect-uri"), help: "Remove a redirect URI (repeatable).") var removeRedirectURIs: [String] = []
        @Option(name: .customLong("add-post-logout-redirect-uri"), help: "Add a post-logout redirect URI (repeatable).")
        var addPostLogoutRedirectURIs: [String] = []
        @Option(name: .customLong("remove-post-logout-redirect-uri"), help: "Remove a post-logout redirect URI (repeatable).")
        var removePostLogoutRedirectURIs: [String] = []
        @Option(name: .customLong("add-scope"), help: "Add a scope (repeatable).") var addScopes: [String] = []
        @Option(name: .customLong("remove-scope"), help: "Remove a scope (repeatable); refresh tokens stop carrying it.") var removeScopes: [String] = []
        @Option(name: .customLong("add-grant"), help: "Add a grant type (repeatable).") var addGrants: [String] = []
        @Option(name: .customLong("remove-grant"), help: "Remove a grant type (repeatable).") var removeGrants: [String] = []
        @Flag(name: .customLong("require-dpop"), inversion: .prefixedNo, help: "Require DPoP proofs (RFC 9449).") var requireDPoP: Bool?
        @Flag(name: .customLong("require-par"), inversion: .prefixedNo, help: "Require pushed authorization requests (RFC 9126).")
        var requirePAR: Bool?
        @Option(name: .customLong("access-token-ttl"), help: "Access token lifetime in seconds; 0: the issuer's.") var accessTokenTTL: Int?
        @Option(name: .customLong("refresh-token-ttl"), help: "Refresh token lifetime in seconds; 0: the issuer's.") var refreshTokenTTL: Int?
        @Option(name: .customLong("ios-app-id"), help: "The iOS app (TEAMID.bundle.id); \"\" removes it.") var iosAppID: String?
        @Option(help: "The Android app's package; \"\" removes it (with its fingerprints).") var androidPackage: String?
        @Option(name: .customLong("android-cert-fingerprint"), help: "Replaces the Android signing certificate fingerprints (repeatable).")
        var androidCertificateFingerprints: [String] = []
        @Option(name: .customLong("backchannel-logout-uri"), help: "Set the back-channel logout URI (absolute https, no fragment).")
        var backchannelLogoutURI: String?
        @Flag(name: .customLong("no-backchannel-logout"), help: "Remove the back-channel logout URI: the client is told of no logout.")
        var noBackchannelLogout = false
        @OptionGroup var authentication: AuthenticationOptions

        func validate() throws {
            if backchannelLogoutURI != nil && noBackchannelLogout {
                throw ArgumentParser.ValidationError("give --backchannel-logout-uri or --no-backchannel-logout, not both")
            }
        }

        func run() throws {
            var changes = ClientChanges()
            changes.backchannelLogoutURI = noBackchannelLogout ? "" : backchannelLogoutURI
            changes.authMethod = authentication.authMethod
            changes.jwks = try authentication.jwks()
            changes.jwksURI = authentication.jwksURI
            changes.requireSignedRequestObject = authentication.requireSignedRequestObject
            changes.idTokenAlgorithm = authentication.idTokenAlgorithm
            changes.profile = authentication.profile
            changes.displayName = displayName
            changes.addRedirectURIs = addRedirectURIs
            changes.removeRedirectURIs = removeRedirectURIs
            changes.addPostLogoutRedirectURIs = addPostLogoutRedirectURIs
            changes.removePostLogoutRedirectURIs = removePostLogoutRedirectURIs
            changes.addScopes = addScopes
            changes.removeScopes = removeScopes
            changes.addGrantTypes = addGrants
            changes.removeGrantTypes = removeGrants
            changes.requireDPoP = requireDPoP
            changes.requirePAR = requirePAR
            changes.accessTokenLifetime = accessTokenTTL
            changes.refreshTokenLifetime = refreshTokenTTL
            changes.iosAppID = iosAppID
            changes.androidPackage = androidPackage
            if androidPackage == "" { changes.androidCertificateFingerprints = [] }
            if !androidCertificateFingerprints.isEmpty { changes.androidCertificateFingerprints = androidCertificateFingerprints }
            let context = try Context.open()
            let client = attempt { try context.clients.update(clientID: clientID, changes) }
            AdminAudit.changed("client update", target: client.clientID, client: client.clientID)
            context.refreshAppLinkFiles()
            print("updated client \(client.clientID)")
        }
    }

    struct RegistrationToken: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "registration-token",
            abstract: "Print a new initial access token for dynamic client registration (POST /register, RFC 7591).",
            discussion: """
                The token is shown once and stored only as its SHA-256. A client registering with it gets its client_id, \
                a registration access token and its configuration endpoint (RFC 7592).
                """)
        @Option(name: .customLong("ttl"), help: "Seconds the token is good for (60 to 2592000; default 3600).") var ttl: Int64 = 3600
        @Option(name: .customLong("uses"), help: "How many clients it may register (1 to 1000; default 1).") var uses: Int64 = 1

        func run() throws {
            let context = try Context.open()
            let token = attempt { try context.services.dynamicRegistration.issueInitialAccessToken(lifetime: ttl, uses: uses) }
            // Never the token itself in the audit log.
            AdminAudit.changed("client registration-token", target: "\(uses) use(s), \(ttl) s")
            print(token)
        }
    }

    struct Secret: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Replace a confidential client's secret (read from standard input); the old one stops working at once.")
        @Argument(help: "The client_id.") var clientID: String
        @Flag(help: "Read the new secret from standard input (required).") var secretStdin = false

        func run() throws {
            guard secretStdin else { fail("pass --secret-stdin and the secret on standard input") }
            let secret = readSecretLine("client secret")
            let context = try Context.open()
            attempt { try context.clients.replaceSecret(clientID: clientID, secret: secret) }
            AdminAudit.changed("client secret", target: clientID, client: clientID)
            print("replaced the secret of client \(clientID)")
        }
    }

    struct Delete: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete a client and everything issued to it.",
            discussion: """
                Its refresh tokens, codes and device secrets go with it; its access tokens stop working at the issuer \
                (userinfo, introspection) at once, and at APIs that validate offline when they expire.
                """)
        @Argument(help: "The client_id.") var clientID: String

        func run() throws {
            let context = try Context.open()
            attempt { try context.clients.delete(clientID: clientID) }
            AdminAudit.changed("client delete", target: clientID, client: clientID)
            context.refreshAppLinkFiles()
            print("deleted client \(clientID)")
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List clients.",
            discussion: "One block per client, wrapped to 100 columns; --json gives every setting.")
        @Flag(help: "Print a JSON array of objects.") var json = false

        func run() throws {
            let context = try Context.open()
            let clients = attempt { try context.clients.list() }
            if json { return printJSON(clients.map(ClientJSON.init)) }
            print(ClientListing.text(clients), terminator: "")
        }
    }
}
