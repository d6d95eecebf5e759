import Foundation
import XCTest
@testable import AuthServer
import IssuerComposition
import IssuerStorage
@testable import IssuerStorageSQLite
import SQLiteClient
import SSOCore

/// `ssoctl doctor`'s checks on a temporary home: each one passes on a
/// healthy home and fails (or warns) on the one thing it is about.
final class DoctorTests: XCTestCase {
    var issuer: TemporaryIssuer!
    var clock: TestClock!

    override func setUpWithError() throws {
        clock = TestClock()
        issuer = try TemporaryIssuer(clock: clock.clock)
        chmod(issuer.home, 0o711)
        try keys.rotate()
        // What Scripts/run writes; its absence is a warning of its own.
        try "GATEHOUSE_BASE_PORT=8443\n".write(toFile: issuer.home + "/gatehouse.conf", atomically: true, encoding: .utf8)
    }

    override func tearDown() { issuer?.cleanUp() }

    var keys: SigningKeys {
        issuer.keys
    }

    /// Foundation's Process, as ssoctl runs programs (the library cannot).
    static let runProcess: CommandRunner = { executable, arguments in
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self))
    }

    /// No nginx config and no certificate unless a test adds them.
    func diagnose(_ configure: (inout DoctorSettings) -> Void = { _ in }) throws -> [DoctorFinding] {
        var settings = DoctorSettings()
        settings.runCommand = Self.runProcess
        configure(&settings)
        let context = DoctorContext(config: issuer.config, storage: try IssuerComposition.openStorageForInspection(issuer.config),
                                    settings: settings, clock: clock.clock)
        return Doctor.run(context)
    }

    func finding(_ check: String, _ findings: [DoctorFinding], file: StaticString = #filePath, line: UInt = #line) throws -> DoctorFinding {
        let matching = findings.filter { $0.check == check }
        XCTAssertEqual(matching.count, 1, "one \(check) line in \(findings.map(\.line))", file: file, line: line)
        return try XCTUnwrap(matching.first, file: file, line: line)
    }

    func status(_ check: String, _ findings: [DoctorFinding], file: StaticString = #filePath, line: UInt = #line) throws -> DoctorFinding.Status {
        try finding(check, findings, file: file, line: line).status
    }

    var activeKeyPath: String { get throws { issuer.privateKeyPath(try XCTUnwrap(keys.activeKID())) } }

    // MARK: A healthy home

    func testAHealthyHomePassesEveryCheckThatHasSomethingToCheck() throws {
        let findings = try diagnose()
        let expected = ["config", "database.open", "database.integrity", "database.schema", "database.journal", "keys.active",
                        "keys.private-key", "keys.age", "keys.next", "keys.files", "files.home", "files.database", "files.keys-dir",
                        "files.log-dir", "files.logs"]
        for check in expected {
            let result = try finding(check, findings)
            XCTAssertEqual(result.status, .ok, result.line)
        }
        // Nothing to test without a rendered config or a certificate: warnings, not failures.
        XCTAssertEqual(try status("nginx.config", findings), .warn)
        XCTAssertEqual(try status("tls.certificate", findings), .warn)
        XCTAssertEqual(try finding("database.integrity", findings).line, "ok  database.integrity  PRAGMA integrity_check: ok")
        XCTAssertEqual(try finding("database.schema", findings).detail, "issuer schema version \(SQLiteIssuerSchema.migrations.last!.version), up to date")
        XCTAssertTrue(try finding("keys.private-key", findings).detail.hasSuffix("mode 0600, RSA-2048, matches its kid"))
    }

    func testDoctorChangesNothing() throws {
        let before = try issuer.fullSnapshot()
        let files = try FileManager.default.subpathsOfDirectory(atPath: issuer.home).sorted()
        _ = try diagnose()
        XCTAssertEqual(try issuer.fullSnapshot(), before)
        XCTAssertEqual(try FileManager.default.subpathsOfDirectory(atPath: issuer.home).sorted(), files)
    }

    // MARK: Configuration

    func testAConfigurationThatDoesNotLoadFailsAndTheOtherChecksStillRun() throws {
        let context = Doctor.context(environment: ["GATEHOUSE_HOME": issuer.home, "GATEHOUSE_ISSUER": "http://localhost:8443"],
                                     clock: clock.clock, openStorage: IssuerComposition.openStorageForInspection)
        let findings = Doctor.run(context)
        let config = try finding("config", findings)
        XCTAssertEqual(config.status, .fail)
        XCTAssertTrue(config.detail.contains("GATEHOUSE_ISSUER must be an https origin"), config.detail)
        XCTAssertEqual(try status("database.integrity", findings), .ok, "the home is still found")
        XCTAssertEqual(try status("keys.private-key", findings), .ok)
    }

    func testIncoherentSettingsAreReported() throws {
        var findings = Doctor.run(Doctor.context(environment: ["GATEHOUSE_HOME": issuer.home, "GATEHOUSE_API_A_ORIGIN": "https://api.example",
                                                               "GATEHOUSE_API_B_ORIGIN": "https://api.example"], clock: clock.clock, openStorage: IssuerComposition.openStorageForInspection))
        XCTAssertEqual(try status("config", findings), .fail)
        XCTAssertTrue(try finding("config", findings).detail.contains("api-a and api-b share the origin https://api.example"))
        findings = Doctor.run(Doctor.context(environment: ["GATEHOUSE_HOME": issuer.home, "GATEHOUSE_KEY_ACTIVATION_DELAY": "10",
                                                           "GATEHOUSE_JWKS_MAX_AGE": "3600"], clock: clock.clock, openStorage: IssuerComposition.openStorageForInspection))
        XCTAssertEqual(try status("config", findings), .warn)
        XCTAssertTrue(try finding("config", findings).detail.contains("GATEHOUSE_KEY_ACTIVATION_DELAY"))
        findings = Doctor.run(Doctor.context(environment: [:], clock: clock.clock, openStorage: IssuerComposition.openStorageForInspection))
        XCTAssertTrue(try finding("config", findings).detail.contains("GATEHOUSE_HOME is not set"))
    }

    // MARK: Database

    func testAMissingDatabaseFailsAndIsNotCreated() throws {
        let home = issuer.home + "/elsewhere"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        let findings = Doctor.run(Doctor.context(environment: ["GATEHOUSE_HOME": home], clock: clock.clock, openStorage: IssuerComposition.openStorageForInspection))
        XCTAssertEqual(try status("database.open", findings), .fail)
        XCTAssertFalse(FileManager.default.fileExists(atPath: home + "/gatehouse.sqlite"))
        XCTAssertFalse(findings.contains { $0.check.hasPrefix("database.") && $0.check != "database.open" }, "nothing to look into")
        XCTAssertFalse(findings.contains { $0.check == "keys.active" })
    }

    func testACorruptIndexFailsTheIntegrityCheck() throws {
        // The documented way to make an index disagree with its table: point
        // the index's definition at another column behind SQLite's back.
        try issuer.database.executeScript("""
            CREATE TABLE doctor_probe (a INTEGER, b INTEGER);
            CREATE INDEX doctor_probe_a ON doctor_probe(a);
            INSERT INTO doctor_probe VALUES (1, 100), (2, 200), (3, 300);
            PRAGMA writable_schema = ON;
            UPDATE sqlite_schema SET sql = 'CREATE INDEX doctor_probe_a ON doctor_probe(b)' WHERE name = 'doctor_probe_a';
            PRAGMA writable_schema = OFF;
            """)
        let findings = try diagnose()
        let integrity = try finding("database.integrity", findings)
        XCTAssertEqual(integrity.status, .fail)
        XCTAssertTrue(integrity.detail.contains("doctor_probe_a"), integrity.detail)
        XCTAssertEqual(try status("database.integrity", diagnose { $0.quickIntegrityCheck = true }), .ok,
                       "quick_check does not compare indexes with tables, which is why it is only an option")
    }

    func testASchemaBehindOrAheadOfThisBuildFails() throws {
        try issuer.database.execute("UPDATE schema_migrations SET version = 3 WHERE component = 'issuer'")
        var schema = try finding("database.schema", diagnose())
        XCTAssertEqual(schema.status, .fail)
        XCTAssertEqual(schema.detail, "issuer schema version 3, this build expects \(SQLiteIssuerSchema.migrations.last!.version): run ssoctl setup")
        try issuer.database.execute("UPDATE schema_migrations SET version = ? WHERE component = 'issuer'",
                                    [.integer(Int64(SQLiteIssuerSchema.migrations.last!.version + 1))])
        schema = try finding("database.schema", diagnose())
        XCTAssertEqual(schema.status, .fail)
        XCTAssertTrue(schema.detail.contains("newer than this build"))
        try issuer.database.execute("DELETE FROM schema_migrations")
        XCTAssertEqual(try status("database.schema", diagnose()), .fail)
    }

    func testARollbackJournalWarns() throws {
        try issuer.database.executeScript("PRAGMA journal_mode = DELETE")
        let journal = try finding("database.journal", diagnose())
        XCTAssertEqual(journal.status, .warn)
        XCTAssertTrue(journal.detail.hasPrefix("journal_mode is delete"))
    }

    // MARK: Signing keys

    func testNoActiveKeyFails() throws {
        let kid = try XCTUnwrap(keys.activeKID())
        try issuer.database.execute("DELETE FROM signing_keys WHERE kid = ?", [.text(kid)])
        let findings = try diagnose()
        XCTAssertEqual(try finding("keys.active", findings).line, "fail  keys.active  no active signing key: run ssoctl keys rotate --now")
        XCTAssertFalse(findings.contains { $0.check == "keys.private-key" || $0.check == "keys.age" })
    }

    func testAnActivePrivateKeyReadableByOthersFails() throws {
        let path = try activeKeyPath
        for mode: mode_t in [0o644, 0o640, 0o604, 0o660, 0o610] {
            chmod(path, mode)
            let findings = try diagnose()
            let privateKey = try finding("keys.private-key", findings)
            XCTAssertEqual(privateKey.status, .fail)
            XCTAssertTrue(privateKey.detail.hasPrefix("\(path) is mode 0\(String(mode, radix: 8)) ("), privateKey.detail)
            XCTAssertTrue(privateKey.detail.hasSuffix("): a private key must be its owner's alone; chmod 600 it"), privateKey.detail)
            XCTAssertEqual(try status("keys.files", findings), .fail)
        }
        chmod(path, 0o400)
        XCTAssertEqual(try status("keys.private-key", diagnose()), .ok, "stricter than 0600 is fine")
    }

    func testAMissingOrForeignPrivateKeyFails() throws {
        let path = try activeKeyPath
        let original = try Data(contentsOf: URL(fileURLWithPath: path))
        try FileManager.default.removeItem(atPath: path)
        XCTAssertTrue(try finding("keys.private-key", diagnose()).detail.hasSuffix("is missing: \(try XCTUnwrap(keys.activeKID())) cannot sign"))
        let other = try RSAKey.generate()
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(try other.privateKeyPEM()), attributes: [.posixPermissions: 0o600]))
        let foreign = try finding("keys.private-key", diagnose())
        XCTAssertEqual(foreign.status, .fail)
        XCTAssertTrue(foreign.detail.contains("holds another key"), foreign.detail)
        try Data("not a key".utf8).write(to: URL(fileURLWithPath: path))
        XCTAssertTrue(try finding("keys.private-key", diagnose()).detail.contains("does not load"))
        try original.write(to: URL(fileURLWithPath: path))
        XCTAssertEqual(try status("keys.private-key", diagnose()), .ok)
    }

    func testKeyAgeWarnsThenFails() throws {
        clock.advance(90 * 86_400)
        XCTAssertEqual(try status("keys.age", diagnose()), .ok, "90 days is not older than 90 days")
        clock.advance(86_400)
        var findings = try diagnose()
        XCTAssertEqual(try status("keys.age", findings), .warn)
        XCTAssertTrue(try finding("keys.age", findings).detail.contains("is 91 days old (warn after 90, fail after 180 days)"))
        XCTAssertEqual(try status("keys.next", findings), .warn, "due for rotation and nothing pre-published")
        clock.advance(90 * 86_400)
        findings = try diagnose()
        XCTAssertEqual(try status("keys.age", findings), .fail)
        XCTAssertEqual(try status("keys.age", diagnose { $0.keyAgeWarning = 200 * 86_400; $0.keyAgeFailure = 400 * 86_400 }), .ok,
                       "the thresholds are settings (--key-warn-days, --key-fail-days)")
        try keys.rotate()
        XCTAssertEqual(try status("keys.age", diagnose()), .ok, "a rotation starts over")
    }

    func testAPrePublishedKeyNeedsItsPrivateKeyBeforeItActivates() throws {
        let next = try keys.rotate(activationDelay: 600)
        var keysNext = try finding("keys.next", diagnose())
        XCTAssertEqual(keysNext.status, .ok)
        XCTAssertEqual(keysNext.detail, "\(next) published, signs from \(DoctorTime.format(clock.now + 600))")
        chmod(issuer.privateKeyPath(next), 0o644)
        XCTAssertEqual(try status("keys.next", diagnose()), .fail)
        try FileManager.default.removeItem(atPath: issuer.privateKeyPath(next))
        keysNext = try finding("keys.next", diagnose())
        XCTAssertEqual(keysNext.status, .fail)
        XCTAssertTrue(keysNext.detail.hasSuffix("is missing: \(next) cannot sign"))
    }

    func testKeyFilesMustBeTheOwnersAloneAndLeftoversWarn() throws {
        let seal = issuer.config.refreshSealingKeyPath
        XCTAssertTrue(FileManager.default.createFile(atPath: seal, contents: Data(repeating: 7, count: 32), attributes: [.posixPermissions: 0o600]))
        XCTAssertEqual(try finding("keys.files", diagnose()).detail, "2 files in \(issuer.config.keysDirectory), none readable by group or other")
        chmod(seal, 0o640)
        let exposed = try finding("keys.files", diagnose())
        XCTAssertEqual(exposed.status, .fail)
        XCTAssertTrue(exposed.detail.contains("refresh-seal.key (0640)"), exposed.detail)
        chmod(seal, 0o600)
        XCTAssertTrue(FileManager.default.createFile(atPath: issuer.config.keysDirectory + "/abc.pem.tmp", contents: Data(),
                                                     attributes: [.posixPermissions: 0o600]))
        XCTAssertEqual(try status("keys.files", diagnose()), .warn)
    }

    // MARK: File modes

    func testHomeDatabaseAndKeysDirectoryModes() throws {
        let cases: [(path: String, mode: mode_t, check: String, expected: DoctorFinding.Status)] = [
            (issuer.home, 0o700, "files.home", .ok),
            (issuer.home, 0o755, "files.home", .warn),
            (issuer.home, 0o775, "files.home", .fail),
            (issuer.home, 0o711, "files.home", .ok),
            (issuer.config.databasePath, 0o640, "files.database", .warn),
            (issuer.config.databasePath, 0o644, "files.database", .fail),
            (issuer.config.databasePath, 0o600, "files.database", .ok),
            (issuer.config.keysDirectory, 0o755, "files.keys-dir", .warn),
            (issuer.config.keysDirectory, 0o733, "files.keys-dir", .fail),
            (issuer.config.keysDirectory, 0o700, "files.keys-dir", .ok),
        ]
        for item in cases {
            chmod(item.path, item.mode)
            let result = try finding(item.check, diagnose())
            XCTAssertEqual(result.status, item.expected, "\(item.path) \(String(item.mode, radix: 8)): \(result.line)")
        }
        chmod(issuer.config.databasePath + "-wal", 0o644)
        XCTAssertTrue(try finding("files.database", diagnose()).detail.contains("gatehouse.sqlite-wal is mode 0644 (other-readable)"))
        XCTAssertEqual(FilePermissionsCheck.who(0o075, directory: true), "group-readable/writable/searchable, other-readable/searchable")
        XCTAssertEqual(FilePermissionsCheck.who(0o010), "group-executable")
    }

    func testLogsMustBeTheOwnersAlone() throws {
        let logs = issuer.home + "/log"
        XCTAssertEqual(try finding("files.logs", diagnose()).line, "ok  files.logs  nothing to check: \(logs) absent",
                       "production has no log/: nothing to check")
        try FileManager.default.createDirectory(atPath: logs, withIntermediateDirectories: false)
        chmod(logs, 0o700)
        for name in ["nginx-error.log", "nginx-access.log", "token.log"] {
            XCTAssertTrue(FileManager.default.createFile(atPath: logs + "/" + name, contents: Data("line\n".utf8)))
            chmod(logs + "/" + name, 0o600)
        }
        XCTAssertEqual(try finding("files.logs", diagnose()).line, "ok  files.logs  3 files in \(logs), none readable by group or other")
        XCTAssertEqual(try finding("files.log-dir", diagnose()).line, "ok  files.log-dir  \(logs) 0700")

        for (mode, who) in [(0o644 as mode_t, "group-readable, other-readable"), (0o640, "group-readable"), (0o604, "other-readable"),
                            (0o620, "group-writable")] {
            chmod(logs + "/nginx-error.log", mode)
            let result = try finding("files.logs", diagnose())
            XCTAssertEqual(result.line, "fail  files.logs  group or other can access nginx-error.log (0\(String(mode, radix: 8)): \(who)) "
                           + "in \(logs); chmod 600 them (expected 0600)")
        }
        chmod(logs + "/nginx-error.log", 0o600)

        for (mode, expected) in [(0o755 as mode_t, DoctorFinding.Status.fail), (0o701, .fail), (0o770, .fail), (0o750, .warn),
                                 (0o700, .ok)] {
            chmod(logs, mode)
            let result = try finding("files.log-dir", diagnose())
            XCTAssertEqual(result.status, expected, result.line)
        }
    }

    // MARK: nginx

    /// A stand-in nginx that records its arguments and answers as told.
    func fakeNginx(exitStatus: Int, message: String = "") throws -> String {
        let path = issuer.home + "/fake-nginx"
        try """
            #!/bin/sh
            printf '%s\\n' "$@" > "\(issuer.home)/nginx-arguments"
            [ -n '\(message)' ] && echo '\(message)' >&2
            exit \(exitStatus)
            """.write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, 0o755)
        return path
    }

    func renderedConfig(_ text: String = "events {}\n") throws -> String {
        try FileManager.default.createDirectory(atPath: issuer.home + "/nginx", withIntermediateDirectories: true)
        let path = issuer.home + "/nginx/nginx.conf"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    func testNginxTestsTheRenderedConfigTheWayScriptsRunDoes() throws {
        let config = try renderedConfig()
        let nginx = try fakeNginx(exitStatus: 0)
        let accepted = try finding("nginx.config", diagnose { $0.nginxExecutable = nginx })
        XCTAssertEqual(accepted.line, "ok  nginx.config  nginx -t accepts \(config)")
        let arguments = try String(contentsOfFile: issuer.home + "/nginx-arguments", encoding: .utf8).split(separator: "\n")
        XCTAssertEqual(arguments, ["-t", "-q", "-p", "\(issuer.home)/nginx/", "-e", "stderr", "-c", "\(config)"])

        let rejecting = try fakeNginx(exitStatus: 1, message: "nginx: [emerg] unknown directive \"bogus\" in \(config):1")
        let rejected = try finding("nginx.config", diagnose { $0.nginxExecutable = rejecting })
        XCTAssertEqual(rejected.status, .fail)
        XCTAssertEqual(rejected.detail, "nginx -t rejects \(config): nginx: [emerg] unknown directive \"bogus\" in \(config):1")
    }

    func testAMissingConfigWarnsUnlessItWasNamed() throws {
        XCTAssertEqual(try status("nginx.config", diagnose()), .warn)
        XCTAssertEqual(try status("nginx.config", diagnose { $0.nginxConfigPath = self.issuer.home + "/none.conf" }), .fail)
        _ = try renderedConfig()
        XCTAssertEqual(try status("nginx.config", diagnose { $0.nginxExecutable = self.issuer.home + "/no-nginx" }), .fail,
                       "a named executable that cannot run is a failure")
        XCTAssertEqual(try status("nginx.config", diagnose { $0.nginxExecutable = "/bin/true"; $0.runCommand = nil }), .warn,
                       "without a way to run programs, nothing is tested")
    }

    /// The real nginx, when installed (Scripts/test installs it).
    func testRealNginxAcceptsAGoodConfigAndRejectsABadOne() throws {
        guard NginxConfigCheck.find("nginx") != nil else { throw XCTSkip("nginx is not installed") }
        let home = issuer.home
        _ = try renderedConfig("""
            pid \(home)/nginx/nginx.pid;
            error_log stderr;
            events { worker_connections 16; }
            http { access_log off; server { listen 127.0.0.1:1; location / { return 204; } } }
            """)
        XCTAssertEqual(try status("nginx.config", diagnose()), .ok)
        _ = try renderedConfig("events {}\nbogus_directive on;\n")
        let rejected = try finding("nginx.config", diagnose())
        XCTAssertEqual(rejected.status, .fail)
        XCTAssertTrue(rejected.detail.contains("unknown directive \"bogus_directive\""), rejected.detail)
    }

    // MARK: TLS certificates

    /// notBefore 2024-01-01T00:00:00Z, notAfter 2034-01-01T12:30:15Z (the SSOCoreTests fixture).
    static let certificate = """
        -----BEGIN CERTIFICATE-----
        MIIBMzCB2qADAgECAhQMPB5kI4H974uLBQ+XQ3PuFuDlYzAKBggqhkjOPQQDAjAa
        MRgwFgYDVQQDDA9maXh0dXJlLXV0Y3RpbWUwHhcNMjQwMTAxMDAwMDAwWhcNMzQw
        MTAxMTIzMDE1WjAaMRgwFgYDVQQDDA9maXh0dXJlLXV0Y3RpbWUwWTATBgcqhkjO
        PQIBBggqhkjOPQMBBwNCAAQLaMEA54MYn5cc5sSoPRx1DG8DK/EiX9MOuNp/ckeb
        FYjOGgNnoapxBCtpWaPuvOTj9Mf+c0nwEW4ii9SCnpWxMAoGCCqGSM49BAMCA0gA
        MEUCIQDYMThDfGFI2gNrbs+/L1hj2Q27TaSMwINHQGBpBvQtDQIgFUfGF1xeyVpj
        7K7PNp+M/3+0dS6S8vikUD3Klb27p7M=
        -----END CERTIFICATE-----

        """
    static let notBefore: Int64 = 1_704_067_200
    static let notAfter: Int64 = 2_019_731_415

    func writeCertificate(_ name: String) throws -> String {
        try FileManager.default.createDirectory(atPath: issuer.home + "/tls", withIntermediateDirectories: true)
        let path = issuer.home + "/tls/" + name
        try Self.certificate.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    func certificateFinding(at now: Int64, _ path: String) throws -> DoctorFinding {
        var settings = DoctorSettings()
        settings.certificatePaths = [path]
        let context = DoctorContext(config: issuer.config, storage: nil, settings: settings, clock: TestClock(now).clock)
        return try XCTUnwrap(CertificateExpiryCheck().findings(context).first)
    }

    func testCertificateExpiryWarnsWithinThirtyDaysAndFailsOnceExpired() throws {
        let path = try writeCertificate("server.pem")
        let healthy = try certificateFinding(at: Self.notAfter - 31 * 86_400, path)
        XCTAssertEqual(healthy.line, "ok  tls.certificate  \(path): /CN=fixture-utctime expires 2034-01-01T12:30:15Z (in 31 days)")
        XCTAssertEqual(try certificateFinding(at: Self.notAfter - 29 * 86_400, path).status, .warn)
        let expired = try certificateFinding(at: Self.notAfter, path)
        XCTAssertEqual(expired.line, "fail  tls.certificate  \(path): /CN=fixture-utctime expired 2034-01-01T12:30:15Z")
        XCTAssertEqual(try certificateFinding(at: Self.notBefore - 1, path).status, .fail, "not valid yet")
        XCTAssertEqual(try certificateFinding(at: 1_800_000_000, issuer.home + "/none.pem").line,
                       "fail  tls.certificate  \(issuer.home)/none.pem is missing")
        try "no certificate here".write(toFile: path, atomically: true, encoding: .utf8)
        XCTAssertEqual(try certificateFinding(at: 1_800_000_000, path).status, .fail)
    }

    func testCertificatesAreFoundInTheNginxConfigAndTheHome() throws {
        clock.advance(100_000_000)  // into the fixture's validity period
        let server = try writeCertificate("server.pem")
        let ca = try writeCertificate("ca.pem")
        let other = try writeCertificate("other.pem")
        _ = try renderedConfig("""
            http {
                server {
                    ssl_certificate \(server);
                    ssl_certificate_key \(issuer.home)/tls/server.key;
                }
                server {
                    ssl_certificate\t\(other);
                    # ssl_certificate /commented/out.pem;
                    ssl_certificate $ssl_server_name.pem;
                    ssl_certificate \(server);
                }
            }
            """)
        let findings = try diagnose { $0.nginxExecutable = try? self.fakeNginx(exitStatus: 0) }.filter { $0.check == "tls.certificate" }
        XCTAssertEqual(findings.map(\.status), [.ok, .ok, .ok])
        XCTAssertEqual(findings.map { $0.detail.components(separatedBy: ":").first! }, [server, other, ca])
        try FileManager.default.removeItem(atPath: issuer.home + "/nginx/nginx.conf")
        XCTAssertEqual(try diagnose().filter { $0.check == "tls.certificate" }.map { $0.detail.components(separatedBy: ":").first! },
                       [server, ca], "no config: the home's server certificate and CA")
        XCTAssertEqual(try diagnose { $0.certificatePaths = [other] }.filter { $0.check == "tls.certificate" }.count, 1,
                       "--certificate replaces discovery")
    }
}
