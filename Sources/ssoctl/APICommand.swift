import ArgumentParser
import AuthServer
import IssuerStorage

struct APICommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "api", abstract: "Register, list and remove your own APIs (resource servers) and the scopes they own.",
        discussion: """
            An access token's aud lists the registered APIs that own a scope it grants; the RFC 8707 resource \
            parameter narrows it to the APIs named. A scope neither OpenID Connect's nor owned by a registered API \
            is refused (invalid_scope).
            """,
        subcommands: [Add.self, List.self, Remove.self])

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Register an API: its audience and the scopes it owns.")
        @Argument(help: "The audience: an absolute URI, usually the API's origin (https://api.example.com).") var audience: String
        @Option(name: .customLong("scope"), help: "A scope the API owns (repeatable; at least one).") var scopes: [String] = []
        @Option(help: "A display name (default: the audience).") var name: String?

        func run() throws {
            let context = try Context.open()
            let api = attempt { try context.services.apis.add(audience: audience, name: name, scopes: scopes) }
            AdminAudit.changed("api add", target: api.audience)
            print("added API \(api.audience) owning \(api.scopes.joined(separator: " "))")
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List registered APIs.")
        @Flag(help: "Print a JSON array of objects.") var json = false

        func run() throws {
            let context = try Context.open()
            let apis = attempt { try context.services.apis.all() }
            if json { return printJSON(apis.map(APIJSON.init)) }
            printTable(["AUDIENCE", "NAME", "SCOPES"], apis.map { [$0.audience, $0.name, $0.scopes.joined(separator: " ")] })
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove an API; its scopes are taken from every client.",
            discussion: "Access tokens already issued for it keep working at the API until they expire (it validates them offline).")
        @Argument(help: "The audience as registered.") var audience: String

        func run() throws {
            let context = try Context.open()
            let changed = attempt { try context.services.apis.remove(audience: audience) }
            AdminAudit.changed("api remove", target: audience)
            print("removed API \(audience)" + (changed.isEmpty ? "" : "; its scopes were taken from \(changed.joined(separator: ", "))"))
        }
    }
}
