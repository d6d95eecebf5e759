import ArgumentParser
import AuthServer
import IssuerStorage

struct ClientCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "client", abstract: "Register and list OAuth clients; show and configure native SSO groups.",
        subcommands: [Add.self, List.self, ClientGroupCommand.self])

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Register a client. Public (no secret) unless --secret-stdin is given, which makes it confidential (client_secret_basic).")
        @Argument(help: "The client_id.") var clientID: String
        @Option(name: .customLong("redirect-uri"), help: "A redirect URI, matched exactly (repeatable; at least one).") var redirectURIs: [String] = []
        @Option(name: .customLong("post-logout-redirect-uri"), help: "A post-logout redirect URI (repeatable).") var postLogoutRedirectURIs: [String] = []
        @Option(name: .customLong("scope"), help: "A scope the client may ask for (repeatable; default: openid).") var scopes: [String] = []
        @Option(help: "Native SSO group: clients of one group share sign-in on a device.") var nativeSSOGroup: String?
        @Flag(help: "Read a client secret from standard input.") var secretStdin = false

        func run() throws {
            let secret = secretStdin ? readSecretLine("client secret") : nil
            let context = try Context.open()
            let client = attempt {
                try context.clients.add(clientID: clientID, redirectURIs: redirectURIs, postLogoutRedirectURIs: postLogoutRedirectURIs,
                                        scopes: scopes, nativeSSOGroup: nativeSSOGroup, secret: secret)
            }
            print("added \(client.isConfidential ? "confidential" : "public") client \(client.clientID)")
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List clients.")
        func run() throws {
            let context = try Context.open()
            let clients = attempt { try context.clients.list() }
            printTable(["CLIENT_ID", "TYPE", "GROUP", "SCOPES", "REDIRECT_URIS", "POST_LOGOUT_URIS"], clients.map {
                [$0.clientID, $0.isConfidential ? "confidential" : "public", $0.nativeSSOGroup ?? "-", $0.scopes.joined(separator: " "),
                 $0.redirectURIs.joined(separator: " "), $0.postLogoutRedirectURIs.joined(separator: " ")]
            })
        }
    }
}
