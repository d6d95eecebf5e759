import SMTPClient
import SSOCore

/// Where the sender hands a queued message: an SMTP server or the drop
/// directory. One attempt; never throws (every outcome is a `MailDelivery`).
public protocol MailTransport {
    /// `queuedAt`: when the message was queued (the drop directory's file name).
    func send(_ mail: QueuedMail, queuedAt: Int64) -> MailDelivery
    /// Log-safe: where mail goes, never credentials.
    var destination: String { get }
}

extension SMTPTransport: MailTransport {
    public func send(_ mail: QueuedMail, queuedAt: Int64) -> MailDelivery { deliver(mail) }
    public var destination: String { "\(server) (\(server.security.rawValue)\(server.hasCredentials ? ", with credentials" : ""))" }
}

/// `GATEHOUSE_SMTP_URL` unset: each message becomes a file in
/// `$GATEHOUSE_HOME/mail/`. A file that cannot be written (a full disk) is
/// a temporary failure, tried again like a server that is down.
public struct DropDirectoryTransport: MailTransport {
    public let directory: MailDropDirectory

    public init(path: String) { directory = MailDropDirectory(path: path) }

    public func send(_ mail: QueuedMail, queuedAt: Int64) -> MailDelivery {
        do {
            try directory.write(mail, date: queuedAt)
            return .delivered
        } catch {
            return .temporaryFailure(detail: "\(error)")
        }
    }

    public var destination: String { "written to \(directory.path)/" }
}
