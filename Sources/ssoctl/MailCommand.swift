import ArgumentParser
import AuthServer
import Foundation
import IssuerComposition
import IssuerStorage
import SSOCore

/// `ssoctl mail`: a test message through the real path (the outbox and the
/// sender, gatehouse-mailer), and the outbox's backlog.
struct MailCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mail", abstract: "Queue a test message; show the mail outbox's backlog.", subcommands: [Test.self, Status.self])

    struct Test: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Queue a short test message to ADDRESS and print its outbox id.",
            discussion: """
                The message goes through the outbox like every other, so the running mail sender (gatehouse-mailer) \
                delivers it: to GATEHOUSE_SMTP_URL, or as a file in $GATEHOUSE_HOME/mail/ when that is unset. From: \
                GATEHOUSE_MAIL_FROM (default no-reply@ the issuer's host). Follow it in log/mailer.log and with \
                `ssoctl mail status`. An address that is not a plain local@domain is refused (exit 1).
                """)
        @Argument(help: "The recipient's address (local@domain, ASCII).") var address: String

        func run() throws {
            let config = attempt { try GatehouseConfig.load() }
            let settings = attempt { try MailSettings.load(config) }
            let recipient: MailAddress
            do { recipient = try MailAddress(address) } catch { fail("not a mail address we send to: \(error)") }
            let now = systemClock()
            let message = attempt {
                try MailMessage(from: settings.from, to: recipient, subject: "Gatehouse test message",
                                text: Self.text(config.issuer, now: now), html: Self.html(config.issuer, now: now), date: now,
                                messageIDDomain: settings.messageIDDomain)
            }
            let context = try Context.open()
            let id = attempt {
                try context.services.storage.write {
                    try $0.mailOutbox.enqueue(kind: .test, recipient: recipient.address, message: message.serialized(), now: now)
                }
            }
            AdminAudit.changed("mail test", target: recipient.address)
            print(id)
        }

        static func text(_ issuer: String, now: Int64) -> String {
            "This is a test message from the Gatehouse issuer \(issuer), queued with `ssoctl mail test` at \(formatTime(now)).\n"
                + "If you can read it, the issuer's mail reaches this address.\n"
        }

        static func html(_ issuer: String, now: Int64) -> String {
            "<p>This is a test message from the Gatehouse issuer \(HTMLEscaping.escape(issuer)), queued with "
                + "<code>ssoctl mail test</code> at \(formatTime(now)).</p><p>If you can read it, the issuer's mail reaches this address.</p>"
        }
    }

    struct Status: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show where mail goes and the outbox's backlog: messages due now and how long the oldest has waited.",
            discussion: """
                Read-only. --json: {destination, due, oldest_due_age_seconds} (null when nothing is due). A backlog that \
                keeps growing means no sender runs or the SMTP server refuses: see log/mailer.log.
                """)
        @Flag(help: "Print one JSON object.") var json = false

        struct StatusJSON: Encodable {
            let destination: String
            let due: Int
            let oldestDueAgeSeconds: Int64?
            enum CodingKeys: String, CodingKey {
                case destination, due
                case oldestDueAgeSeconds = "oldest_due_age_seconds"
            }
            func encode(to encoder: Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(destination, forKey: .destination)
                try container.encode(due, forKey: .due)
                try container.encode(oldestDueAgeSeconds, forKey: .oldestDueAgeSeconds)
            }
        }

        func run() throws {
            let config = attempt { try GatehouseConfig.load() }
            let settings = attempt { try MailSettings.load(config) }
            let storage = attempt { try IssuerComposition.openStorageForInspection(config) }
            let backlog = attempt { try storage.read.mailOutbox.backlog(now: systemClock()) }
            let status = StatusJSON(destination: Self.destination(settings), due: backlog.due, oldestDueAgeSeconds: backlog.oldestDueAge)
            if json { return printJSON(status) }
            print("destination  \(status.destination)")
            print("due          \(status.due)")
            print("oldest due   \(status.oldestDueAgeSeconds.map { "\($0) s ago" } ?? "-")")
        }

        /// The SMTP server without its credentials, or the drop directory.
        static func destination(_ settings: MailSettings) -> String {
            guard let url = settings.smtpURL else { return "written to \(settings.dropDirectory)/ (GATEHOUSE_SMTP_URL unset)" }
            guard let parts = URLComponents(string: url), let scheme = parts.scheme, let host = parts.host else { return "(unreadable GATEHOUSE_SMTP_URL)" }
            return "\(scheme)://\(host)\(parts.port.map { ":\($0)" } ?? "")"
        }
    }
}
