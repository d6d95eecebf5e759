import ArgumentParser
import AuthServer
import IssuerStorage

/// Scripts/run runs this every minute; production runs it from a timer.
struct SweepCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sweep", abstract: "Delete expired codes, sessions, pending requests and tokens (small batches, never blocking sign-ins).")

    @Flag(help: "Print nothing unless something was removed.") var quiet = false

    func run() throws {
        let context = try Context.open()
        let removed = attempt { try Sweeper(settings: context.services.settings, storage: context.services.storage).sweep() }
        let lines = removed.filter { $0.value > 0 }.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }
        if !quiet || !lines.isEmpty { print(lines.isEmpty ? "nothing to sweep" : "swept " + lines.joined(separator: ", ")) }
    }
}
