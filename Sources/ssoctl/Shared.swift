import AuthServer
import IssuerComposition
import IssuerStorage
import ArgumentParser
import Foundation
import SSOCore

/// What every subcommand opens: the configuration and the migrated database.
struct Context {
    let config: GatehouseConfig
    let services: IssuerServices

    /// `creatingMasterKey`: only `ssoctl setup` may create a PostgreSQL
    /// deployment's master key (the first node's); every other command
    /// needs the copy.
    static func open(creatingMasterKey: Bool = false) throws -> Context {
        do {
            let config = try GatehouseConfig.load()
            try FileManager.default.createDirectory(atPath: config.home, withIntermediateDirectories: true)
            return Context(config: config, services: try IssuerComposition.services(config, creatingMasterKey: creatingMasterKey))
        } catch {
            fail("\(error)")
        }
    }

    var users: UserAccounts { services.users }
    var clients: ClientRegistry { services.clients }
    var keys: SigningKeys { services.signingKeys }
}

/// Prints a clear message to standard error and exits 1; nothing was changed.
func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data(("ssoctl: error: " + message + "\n").utf8))
    Foundation.exit(1)
}

/// Runs `body`, turning any error into `fail`.
func attempt<T>(_ body: () throws -> T) -> T {
    do { return try body() } catch { fail("\(error)") }
}

/// Reads one line from standard input (a password or secret) without its
/// line ending. Empty input is refused by the store's own rules.
func readSecretLine(_ what: String) -> String {
    guard let line = Swift.readLine(strippingNewline: true) else { fail("expected the \(what) on standard input") }
    return line.hasSuffix("\r") ? String(line.dropLast()) : line
}

func formatTime(_ seconds: Int64?) -> String {
    guard let seconds else { return "-" }
    let formatter = ISO8601DateFormatter()
    return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
}

func printTable(_ header: [String], _ rows: [[String]]) {
    let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
    for row in [header] + rows {
        print(row.enumerated().map { $0.element.padding(toLength: widths[$0.offset], withPad: " ", startingAt: 0) }
            .joined(separator: "  ").trimmingCharacters(in: .whitespaces))
    }
}

extension Context {
    /// Rewrites the app-link association files after a client change, where
    /// `ssoctl setup` put them (`$GATEHOUSE_HOME/applinks`, both layouts);
    /// nginx serves the new files at once. Other nodes pick the change up
    /// at their next `ssoctl setup` (every start).
    func refreshAppLinkFiles() {
        let directory = config.home + "/applinks"
        guard FileManager.default.fileExists(atPath: directory) else { return }
        attempt { try AppLinkFiles.write(config, clients: clients.list(), to: directory) }
    }
}
