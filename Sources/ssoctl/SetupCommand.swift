import ArgumentParser
import AuthServer
import IssuerStorage
import Foundation
import SSOCore

/// Used by Scripts/run at every start: migrate, make sure a signing key
/// exists and the account page's client is as it needs to be (AccountClient),
/// write the app-link files, and create the demo data once.
struct SetupCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "setup",
        abstract: "Initialise $GATEHOUSE_HOME: database, signing key, the account page's client, app-link files, demo data.")

    @Flag(help: "Create the demo clients and the demo user if missing (password: $GATEHOUSE_DEMO_PASSWORD or random).")
    var demo = false

    @Option(help: "Where to write .well-known/apple-app-site-association and assetlinks.json.")
    var appLinksDirectory: String?

    func run() throws {
        let context = try Context.open(creatingMasterKey: true)
        var created: [String] = []
        if attempt({ try context.keys.activeKID() }) == nil {
            let kid = attempt { try context.keys.rotate() }
            created.append("signing key " + kid)
            print("created signing key \(kid)")
        }
        // The responders would create it too; creating it here first means
        // they never race each other to it.
        _ = attempt { try context.services.refreshSealingKey() }
        _ = attempt { try context.services.dpop() }
        let demoBefore = demoInventory(context)
        // Before the demo clients, whose scopes must be registered first.
        attempt { try DemoData.ensureAPIs(context.services, config: context.config, demo: demo) }
        if demo { setUpDemo(context) }
        // Every home, new or old: the admin API's own registration (its scopes).
        _ = attempt { try AdminAPIScopes.ensureRegistered(context.services.apis, issuer: context.config.issuer) }
        created += demoInventory(context).subtracting(demoBefore).sorted()
        // Every home, new or old: the account page signs browsers in through it.
        if attempt({ try AccountClient.ensure(context.services) }) { created.append("client " + AccountClient.id) }
        // Scripts/run runs setup at every start: only a start that created
        // something is an administrative change worth a line.
        if !created.isEmpty { AdminAudit.changed("setup", target: created.joined(separator: ", ")) }
        if let appLinksDirectory {
            attempt { try AppLinkFiles.write(context.config, clients: context.clients.list(), to: appLinksDirectory) }
        }
    }

    /// The demo data present now (APIs, demo clients, demo user), to tell
    /// afterwards what this run created: DemoData creates only what is missing.
    func demoInventory(_ context: Context) -> Set<String> {
        let apis = attempt { try context.services.apis.all() }.map { "API " + $0.audience }
        let clients = DemoData.clientIDs.filter { clientID in attempt { try context.clients.find(clientID: clientID) } != nil }
        let user = attempt { try context.users.find(email: DemoData.email) } != nil ? ["user " + DemoData.email] : []
        return Set(apis + clients.map { "client " + $0 } + user)
    }

    func setUpDemo(_ context: Context) {
        let chosen = ProcessInfo.processInfo.environment["GATEHOUSE_DEMO_PASSWORD"].flatMap { $0.isEmpty ? nil : $0 }
        let password = chosen ?? SecureRandom.token(byteCount: 12)
        let created = attempt { try DemoData.ensure(context.services, config: context.config, password: password) }
        if created {
            print("demo user: \(DemoData.email) password: \(password)")
        } else {
            print("demo user: \(DemoData.email) (password as printed at first start\(chosen != nil ? " or $GATEHOUSE_DEMO_PASSWORD" : ""))")
        }
    }
}
