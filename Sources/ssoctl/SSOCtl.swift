import ArgumentParser

@main
struct SSOCtl: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ssoctl",
        abstract: "Administer a Gatehouse issuer: users, clients, signing keys, sessions; check its health and count what it holds.",
        discussion: "Works on $GATEHOUSE_HOME (default var/). Changes take effect for running responders without a restart.",
        subcommands: [UserCommand.self, ClientCommand.self, KeysCommand.self, SessionsCommand.self, SweepCommand.self, SetupCommand.self,
                      DoctorCommand.self, StatsCommand.self])
}
