import ArgumentParser
import Foundation
import IssuerComposition
import IssuerStorage
import SSOCore

/// The way from SQLite to PostgreSQL: a home that ran on SQLite and is
/// pointed at an empty PostgreSQL database refuses to start and names
/// this command.
struct MigrateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Copy this home's issuer state from SQLite to an empty PostgreSQL database.",
        discussion: """
            Reads $GATEHOUSE_HOME/gatehouse.sqlite (read-only: the file is left as it was) and copies every table \
            into the PostgreSQL database URL names: users, clients, APIs, sessions, refresh tokens, TOTP enrolments, \
            passkeys, signing keys, everything. The database must hold no issuer state (a new database, or one with \
            only the schema); otherwise nothing is changed. The schema is created and the rows copied in one \
            transaction, and the rows of every table are counted on both sides: a difference, or tables or columns \
            that one schema has and the other lacks, rolls all of it back.

            The private signing keys (keys/KID.pem) are sealed into the database under keys/master.key, created here \
            if missing (copy it to every other node); TOTP seeds and refresh successors are sealed again under keys \
            derived from it. Tokens issued before the move stay valid: same keys, same kids, same refresh tokens, \
            same sessions.

            Stop the stack first: what it writes after the copy is not copied. Then start it with \
            GATEHOUSE_DATABASE_URL set to URL. To go back, unset GATEHOUSE_DATABASE_URL: the SQLite file is as it \
            was before the move (without what happened on PostgreSQL since).

            Example: ssoctl migrate --to "$GATEHOUSE_DATABASE_URL"
            """)

    @Option(name: .customLong("to"), help: ArgumentHelp("The PostgreSQL database: a libpq URI, postgresql://USER[:PASSWORD]@HOST:PORT/DBNAME.",
                                                          valueName: "URL"))
    var url: String

    func run() throws {
        let config = attempt { try GatehouseConfig.load() }
        let report = attempt { try SQLiteToPostgreSQLMigration.run(config, to: url) }
        AdminAudit.changed("migrate", target: report.target)
        print("copied \(report.source) to \(report.target):")
        printTable(["table", "sqlite", "postgresql"], report.counts.map { [$0.table, String($0.source), String($0.target)] })
        let rows = report.counts.reduce(0) { $0 + $1.target }
        let keys = report.sealedSigningKeys
        print("""
            \(rows) rows in \(report.counts.count) tables, every count equal; \(keys) private signing key\(keys == 1 ? "" : "s") \
            sealed under \(report.masterKeyPath).
            Next: start Gatehouse with GATEHOUSE_DATABASE_URL set to this database; other nodes need a copy of \(report.masterKeyPath).
            """)
    }
}
