import ArgumentParser
import Foundation
import AuthServer
import IssuerStorage

struct KeysCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys", abstract: "List, rotate and retire signing keys.", subcommands: [List.self, Rotate.self, Retire.self])

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List signing keys: next (published, not signing yet), active, published (superseded, tokens may live), expired, retired.",
            discussion: "--json: an array of {kid, state, created_at, activates_at, retired_at} (seconds since the epoch), newest first.")
        @Flag(help: "Print a JSON array of objects.") var json = false

        func run() throws {
            let context = try Context.open()
            let keys = attempt { try context.keys.all() }
            if json { return printJSON(keys.map(SigningKeyJSON.init)) }
            printTable(["KID", "STATE", "CREATED", "SIGNS_FROM", "RETIRED"], keys.map {
                [$0.kid, $0.state.rawValue, formatTime($0.createdAt), formatTime($0.activatesAt), formatTime($0.retiredAt)]
            })
        }
    }

    struct Rotate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add a new RSA-2048 key: published in the JWKS at once, signing after $GATEHOUSE_KEY_ACTIVATION_DELAY seconds (default: the JWKS max age + 300, i.e. 3900).",
            discussion: "The previous key stays published until every token it signed has expired. Use --now after a key compromise, then retire the old key.")
        @Flag(help: "Sign with the new key as soon as the served JWKS lists it (4 s; verifiers that cached the JWKS fetch it on the unknown kid).")
        var now = false

        func run() throws {
            let context = try Context.open()
            let delay = now ? SigningKeys.minimumActivationDelay : context.config.keyActivationDelay
            let kid = attempt { try context.keys.rotate(activationDelay: delay) }
            // --now (a compromise) is worth telling apart from a scheduled rotation.
            AdminAudit.changed(now ? "keys rotate now" : "keys rotate", target: kid)
            if now {
                // Never a token signed by a key nginx's copy of the JWKS does
                // not list yet: the key signs once the copy has it.
                print("published \(kid); it signs once nginx's copy of the JWKS lists it, in \(delay) s")
                waitUntilActive(kid, context)
                print("active key is now \(kid)")
            } else {
                print("published \(kid)")
                print("signs from \(formatTime(try context.keys.all().first { $0.kid == kid }?.activatesAt)) (in \(delay) s)")
            }
        }

        /// Sleeps until the key's activation second has begun.
        func waitUntilActive(_ kid: String, _ context: Context) {
            while attempt({ try context.keys.activeKID() }) != kid {
                Thread.sleep(forTimeInterval: 0.25)
            }
        }
    }

    struct Retire: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Withdraw a non-active key: out of the JWKS, private key deleted; tokens it signed stop verifying.")
        // A kid is base64url, so one in 64 begins with "-": taken as the
        // value, not as an unknown option.
        @Argument(parsing: .allUnrecognized, help: ArgumentHelp("The kid to retire.", valueName: "kid")) var kids: [String]
        var kid: String { (try? IdentifierOperand.single(kids, naming: "kid")) ?? "" }

        func validate() throws {
            _ = try IdentifierOperand.single(kids, naming: "kid")
        }

        func run() throws {
            let context = try Context.open()
            attempt { try context.keys.retire(kid: kid) }
            AdminAudit.changed("keys retire", target: kid)
            print("retired \(kid)")
        }
    }
}
