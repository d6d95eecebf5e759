import ArgumentParser
import AuthServer

struct KeysCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys", abstract: "List, rotate and retire signing keys.", subcommands: [List.self, Rotate.self, Retire.self])

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List signing keys with their state and age.")
        func run() throws {
            let context = try Context.open()
            let keys = attempt { try context.keys.all() }
            printTable(["KID", "STATE", "CREATED", "RETIRED"], keys.map { [$0.kid, $0.state.rawValue, formatTime($0.createdAt), formatTime($0.retiredAt)] })
        }
    }

    struct Rotate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make a new RSA-2048 key the signing key; the previous one stays published until retired.")
        func run() throws {
            let context = try Context.open()
            let kid = attempt { try context.keys.rotate() }
            print("active key is now \(kid)")
        }
    }

    struct Retire: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove a published (non-active) key from the JWKS and delete its private key.")
        @Argument(help: "The kid to retire.") var kid: String
        func run() throws {
            let context = try Context.open()
            attempt { try context.keys.retire(kid: kid) }
            print("retired \(kid)")
        }
    }
}
