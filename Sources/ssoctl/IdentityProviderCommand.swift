import ArgumentParser
import AuthServer
import Foundation
import IssuerComposition
import IssuerStorage

/// `ssoctl idp`: the upstream OpenID Connect providers people may sign in
/// with ("Continue with LABEL" on the login page).
struct IdentityProviderCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "idp", abstract: "Add, list and remove upstream OpenID Connect providers (Apple, Google, any other).",
        subcommands: [Add.self, List.self, Remove.self])

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add a provider, found by its discovery document, and print the redirect URI to register there.",
            discussion: """
                The issuer's discovery document is read now (ISSUER/.well-known/openid-configuration, over HTTPS, trusting the \
                system's CAs, GATEHOUSE_CA_FILE and the development layout's tls/ca.pem); its issuer must equal --issuer exactly. \
                --preset apple: issuer https://appleid.apple.com, no secret (the issuer signs one with --private-key-file, the .p8 \
                key from Apple, with --team-id and --key-id). --preset google: issuer https://accounts.google.com; --hosted-domain \
                limits it to one Workspace domain. The secret and the key are sealed before they are stored.
                """)
        @Argument(help: "The provider's short name: a-z, 0-9 and -, 1 to 32 (the ID token's idp claim).") var name: String
        @Option(help: "The provider's issuer URL (https; not needed with a preset).") var issuer: String?
        @Option(help: "The client id Gatehouse was registered with at the provider.") var clientID: String
        @Flag(help: "Read the client secret from standard input.") var secretStdin = false
        @Option(name: .customLong("scope"), help: "A scope to ask the provider for (repeatable; default: openid email profile).")
        var scopes: [String] = []
        @Option(help: "What the login page says: \"Continue with LABEL\" (default: the name).") var label: String?
        @Option(help: "generic (default), apple or google.") var preset: String = "generic"
        @Option(help: "Apple: the team id.") var teamID: String?
        @Option(help: "Apple: the key id of the Sign in with Apple key.") var keyID: String?
        @Option(help: "Apple: the .p8 private key file.") var privateKeyFile: String?
        @Option(help: "Google: only accounts of this Workspace domain (hd).") var hostedDomain: String?

        func run() throws {
            let secret = secretStdin ? readSecretLine("client secret") : nil
            let pem = privateKeyFile.map { path -> [UInt8] in
                guard let data = FileManager.default.contents(atPath: path) else { fail("cannot read \(path)") }
                return [UInt8](data)
            }
            let context = try Context.open()
            let registration = ProviderRegistration(
                name: name, preset: IdentityProviderPreset(rawValue: preset), issuer: issuer, clientID: clientID, secret: secret, scopes: scopes,
                label: label, appleTeamID: teamID, appleKeyID: keyID, appleKeyPEM: pem, hostedDomain: hostedDomain)
            let fetcher = OutboundDocumentFetcher(context.config, environment: ProcessInfo.processInfo.environment)
            let provider = attempt { try context.services.identityProviders.add(registration, fetcher: fetcher) }
            AdminAudit.changed("idp add", target: provider.name)
            print("added identity provider \(provider.name) (\(provider.issuer))")
            print("redirect URI to register at the provider: \(IdentityProviderRegistry.redirectURI(issuer: context.config.issuer))")
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the providers (never their secrets).")
        @Flag(help: "Print a JSON array of objects.") var json = false

        func run() throws {
            let context = try Context.open()
            let providers = attempt { try context.services.identityProviders.list() }
            if json { return printJSON(providers.map(IdentityProviderJSON.init)) }
            printTable(["NAME", "PRESET", "ISSUER", "CLIENT ID", "LABEL"],
                       providers.map { [$0.name, $0.preset.rawValue, $0.issuer, $0.clientID, $0.label] })
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a provider: its button leaves the login page at once.")
        @Argument(help: "The provider's name.") var name: String

        func run() throws {
            let context = try Context.open()
            guard attempt({ try context.services.identityProviders.remove(name: name) }) else { fail("no identity provider named \(name)") }
            AdminAudit.changed("idp remove", target: name)
            print("removed identity provider \(name)")
        }
    }
}

/// `ssoctl idp list --json`: what a provider is, never its secret or key.
struct IdentityProviderJSON: Encodable {
    let name: String
    let preset: String
    let issuer: String
    let client_id: String
    let scopes: [String]
    let label: String
    let authorization_endpoint: String
    let token_endpoint: String
    let jwks_uri: String
    let hosted_domain: String?

    init(_ provider: IdentityProvider) {
        name = provider.name
        preset = provider.preset.rawValue
        issuer = provider.issuer
        client_id = provider.clientID
        scopes = provider.scopes
        label = provider.label
        authorization_endpoint = provider.endpoints.authorization
        token_endpoint = provider.endpoints.token
        jwks_uri = provider.endpoints.jwks
        hosted_domain = provider.hostedDomain
    }
}
