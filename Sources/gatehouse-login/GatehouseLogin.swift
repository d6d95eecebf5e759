import ArgumentParser
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The mobile app's part of the sign-in, played from a terminal over a
/// loopback redirect (RFC 8252 §7.3), and a tool for integrators to look at
/// what the issuer hands out.
@main
struct GatehouseLogin: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gatehouse-login",
        abstract: "Sign in to a Gatehouse issuer from a terminal, the way a native app does (PKCE, loopback redirect).",
        discussion: """
            Tokens are kept in a file only you can read (default \(TokenFile.defaultPath)); \
            every command but login reads the issuer, client and CA file from it.
            """,
        subcommands: [LoginCommand.self, RefreshCommand.self, CallCommand.self, StatusCommand.self, LogoutCommand.self])

    /// ArgumentParser's own main, except that a `ToolError` is reported as
    /// one plain line instead of "Error: ..." plus usage.
    static func main() {
        // A browser or a server that hangs up mid-write must give an error
        // to report, not kill the process.
        signal(SIGPIPE, SIG_IGN)
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch let error as ToolError {
            Console.error("gatehouse-login: \(error.message)")
            Foundation.exit(error.exitCode)
        } catch {
            exit(withError: error)
        }
    }
}
