import ArgumentParser
import Foundation
import AuthServer
import IssuerStorage
import SSOCore

struct KeysCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys", abstract: "List, rotate and retire signing keys.", subcommands: [List.self, Rotate.self, Retire.self])

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List signing keys: next (published, not signing yet), active, published (superseded, tokens may live), expired, retired.",
            discussion: """
                Each algorithm's keys rotate on their own. --json: an array of {kid, alg, state, created_at, activates_at, \
                retired_at} (seconds since the epoch), newest first.
                """)
        @Flag(help: "Print a JSON array of objects.") var json = false

        func run() throws {
            let context = try Context.open()
            let keys = attempt { try context.keys.all() }
            if json { return printJSON(keys.map(SigningKeyJSON.init)) }
            printTable(["KID", "STATE", "CREATED", "SIGNS_FROM", "RETIRED", "ALG"], keys.map {
                [$0.kid, $0.state.rawValue, formatTime($0.createdAt), formatTime($0.activatesAt), formatTime($0.retiredAt),
                 $0.algorithm.rawValue]
            })
        }
    }

    struct Rotate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add a new signing key (RSA-2048 for RS256 unless --alg says otherwise): published in the JWKS at once, signing after $GATEHOUSE_KEY_ACTIVATION_DELAY seconds (default: the JWKS max age + 300, i.e. 3900).",
            discussion: """
                The previous key of the same algorithm stays published until every token it signed has expired. Use --now after \
                a key compromise, then retire the old key. The first key of an algorithm signs as soon as the served JWKS lists \
                it: no token of that algorithm exists yet.
                """)
        @Flag(help: "Sign with the new key as soon as the served JWKS lists it (4 s; verifiers that cached the JWKS fetch it on the unknown kid).")
        var now = false
        @Option(name: .customLong("alg"), help: "RS256 (RSA-2048, the default), ES256 (P-256) or EdDSA (Ed25519).")
        var algorithmName: String?
        @Flag(name: .customLong("every-alg"), help: """
            Rotate the key of every algorithm that has one (RS256 always): what the quarterly timer runs.
            """) var everyAlgorithm = false

        var algorithm: JWSAlgorithm? {
            JWSAlgorithm(rawValue: algorithmName ?? "RS256").flatMap { IssuerSigningKey.algorithms.contains($0) ? $0 : nil }
        }

        func validate() throws {
            guard algorithm != nil else {
                throw ArgumentParser.ValidationError("--alg is RS256, ES256 or EdDSA: \((algorithmName ?? "").debugDescription)")
            }
            if everyAlgorithm && algorithmName != nil { throw ArgumentParser.ValidationError("give --alg or --every-alg, not both") }
        }

        func run() throws {
            let context = try Context.open()
            var algorithms = [algorithm ?? .rs256]
            if everyAlgorithm {
                let held = attempt { Set(try context.keys.all().filter { $0.state != .retired }.map(\.algorithm)) }
                algorithms = IssuerSigningKey.algorithms.filter { $0 == .rs256 || held.contains($0) }
            }
            for algorithm in algorithms { rotate(algorithm, context) }
        }

        func rotate(_ algorithm: JWSAlgorithm, _ context: Context) {
            let first = attempt { try context.keys.all().allSatisfy { $0.algorithm != algorithm || $0.state == .retired } }
            let immediate = now || first
            let delay = immediate ? SigningKeys.minimumActivationDelay : context.config.keyActivationDelay
            let kid = attempt { try context.keys.rotate(activationDelay: delay, algorithm: algorithm) }
            // --now (a compromise) is worth telling apart from a scheduled rotation.
            AdminAudit.changed(now ? "keys rotate now" : "keys rotate", target: kid)
            let name = algorithm == .rs256 ? "" : algorithm.rawValue + " "
            if immediate {
                // Never a token signed by a key nginx's copy of the JWKS does
                // not list yet: the key signs once the copy has it.
                print("published \(name)\(kid); it signs once nginx's copy of the JWKS lists it, in \(delay) s")
                while attempt({ try context.keys.activeKID(algorithm: algorithm) }) != kid {
                    Thread.sleep(forTimeInterval: 0.25)
                }
                print("active key is now \(kid)")
            } else {
                print("published \(name)\(kid)")
                print("signs from \(formatTime(attempt { try context.keys.all().first { $0.kid == kid }?.activatesAt })) (in \(delay) s)")
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
