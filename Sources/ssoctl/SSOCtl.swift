import ArgumentParser

@main
struct SSOCtl: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ssoctl",
        abstract: "Administer a Gatehouse issuer: users, clients, APIs, signing keys, sessions; check its health and count what it holds.",
        discussion: """
            Works on $GATEHOUSE_HOME (default var/). Changes take effect for running responders without a restart.

            Started as root on a home that belongs to another user (gatehouse, as Scripts/run and docs/DEPLOY.md set it \
            up), ssoctl first becomes that user (its groups, group and uid), so every file it writes stays readable by \
            the responders. `doctor` is the exception: it only reads, and as root it can also test nginx's config and \
            read the TLS files.
            """,
        subcommands: [UserCommand.self, ClientCommand.self, APICommand.self, KeysCommand.self, SessionsCommand.self, SweepCommand.self, SetupCommand.self,
                      DoctorCommand.self, StatsCommand.self])

    /// ArgumentParser's own main, with the switch to the home's owner between
    /// parsing (which opens nothing) and running the command.
    static func main() {
        do {
            var command = try parseAsRoot()
            if !(command is DoctorCommand) { HomeOwner.becomeOwnerIfRoot() }
            try command.run()
        } catch {
            exit(withError: error)
        }
    }
}
