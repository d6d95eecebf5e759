import ArgumentParser
import SSOCore

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

            Every command that changes something (not a refused one) writes one admin_change line to the audit log \
            ($GATEHOUSE_HOME/log/audit.log, or $GATEHOUSE_AUDIT_LOG) naming the operating-system user who ran it \
            ($SUDO_USER under sudo). ssoctl opens it before it becomes the home's owner.
            """,
        version: GatehouseVersion.release,
        subcommands: [UserCommand.self, ClientCommand.self, APICommand.self, KeysCommand.self, SessionsCommand.self, SweepCommand.self, SetupCommand.self,
                      MailCommand.self, DoctorCommand.self, StatsCommand.self, PagesCommand.self, MigrateCommand.self, IdentityProviderCommand.self])

    /// ArgumentParser's own main, with the switch to the home's owner between
    /// parsing (which opens nothing) and running the command. The audit log
    /// is opened just before the switch, while root may still reach log/.
    static func main() {
        do {
            var command = try parseAsRoot()
            AdminAudit.start()
            if !(command is DoctorCommand) { HomeOwner.becomeOwnerIfRoot() }
            try command.run()
        } catch {
            exit(withError: error)
        }
    }
}
