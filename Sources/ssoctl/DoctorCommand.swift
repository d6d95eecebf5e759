import ArgumentParser
import AuthServer
import IssuerComposition
import IssuerStorage
import SSOCore

/// `ssoctl doctor`: checks the deployment without changing it.
struct DoctorCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract: "Check the configuration, database, signing keys, file modes, nginx config and TLS certificates.",
        discussion: """
            Prints one line per check: `ok|warn|fail  CHECK  DETAIL`. Exits 1 when any check fails, 0 otherwise (warnings \
            do not fail). Changes nothing: the database is opened read-only. Checks: config, database.open, \
            database.integrity, database.schema, database.journal, keys.active, keys.private-key, keys.age, keys.next, \
            keys.files, files.home, files.database, files.keys-dir, files.log-dir, files.logs, nginx.config, tls.certificate (one line per file).
            """)

    @Flag(help: "Print {\"ok\": BOOL, \"checks\": [{\"status\", \"check\", \"detail\"}]} instead of lines.")
    var json = false

    @Option(help: ArgumentHelp("The nginx config to test with nginx -t (default: $GATEHOUSE_HOME/nginx/nginx.conf).", valueName: "path"))
    var nginxConfig: String?

    @Option(name: .customLong("certificate"), help: ArgumentHelp(
        "A PEM certificate file to check for expiry (repeatable; default: the nginx config's ssl_certificate files and "
            + "$GATEHOUSE_HOME/tls/ca.pem).", valueName: "path"))
    var certificates: [String] = []

    @Option(help: ArgumentHelp("Warn when the active signing key is older than this.", valueName: "days"))
    var keyWarnDays = 90

    @Option(help: ArgumentHelp("Fail when the active signing key is older than this.", valueName: "days"))
    var keyFailDays = 180

    @Option(help: ArgumentHelp("Warn when a certificate expires within this.", valueName: "days"))
    var certificateWarnDays = 30

    @Flag(help: "PRAGMA quick_check instead of the full integrity_check (much faster on a large database).")
    var quick = false

    func validate() throws {
        // ArgumentParser's, not AuthServer's ValidationError (a user store error).
        guard keyWarnDays > 0, keyFailDays >= keyWarnDays else {
            throw ArgumentParser.ValidationError("need 0 < --key-warn-days <= --key-fail-days")
        }
        guard certificateWarnDays >= 0 else { throw ArgumentParser.ValidationError("--certificate-warn-days must not be negative") }
    }

    func run() throws {
        var settings = DoctorSettings()
        settings.keyAgeWarning = Int64(keyWarnDays) * 86_400
        settings.keyAgeFailure = Int64(keyFailDays) * 86_400
        settings.certificateWarning = Int64(certificateWarnDays) * 86_400
        settings.nginxConfigPath = nginxConfig
        settings.certificatePaths = certificates
        settings.quickIntegrityCheck = quick
        settings.runCommand = ExternalCommand.run
        let findings = Doctor.run(Doctor.context(settings: settings, openStorage: IssuerComposition.openStorageForInspection))
        let healthy = !findings.contains { $0.status == .fail }
        if json {
            struct Report: Encodable { let ok: Bool; let checks: [DoctorFinding] }
            print(String(decoding: attempt { try JSON.encode(Report(ok: healthy, checks: findings)) }, as: UTF8.self))
        } else {
            for finding in findings { print(finding.line) }
        }
        if !healthy { throw ExitCode(1) }
    }
}
