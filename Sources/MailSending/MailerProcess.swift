import FoundationEssentials
import Glibc
import IssuerStorage
import SMTPClient
import SSOCore

/// What `gatehouse-mailer`'s main.swift does, the storage aside (the
/// composition root opens it): the configuration, counters, audit log,
/// transport and signals; then the sender's loop until SIGTERM or SIGINT,
/// which end it after the message in hand (exit 0). A failure to start
/// is logged and ends the process with status 1 (the supervisor restarts it).
public enum MailerProcess {
    /// The endpoint name its log lines and counter file carry.
    public static let name = "mailer"

    /// What the composition root opens for the sender: the storage, and
    /// the couriers of the rows that are not mail.
    public typealias Opened = (storage: any IssuerStorage, couriers: [OutboxMessageKind: any OutboxCourier])

    public static func run(open: (GatehouseConfig) throws -> Opened) -> Never {
        let sender: MailSender
        do {
            let config = try GatehouseConfig.load()
            Metrics.start(endpoint: name, home: config.home)
            if let problem = AuditLog.start(home: config.home) { log(problem) }
            let transport = try MailerProcess.transport(MailSettings.load(config), home: config.home)
            let opened = try open(config)
            sender = MailSender(storage: opened.storage, transport: transport, couriers: opened.couriers, claimer: claimer(), log: log)
            log("started: mail \(transport.destination), claims as \(sender.claimer)")
        } catch {
            log("cannot start: \(error)")
            exit(1)
        }
        StopSignals.install()
        sender.run(shouldStop: { StopSignals.received }, sleep: StopSignals.sleep)
        log("stopped")
        exit(0)
    }

    /// SMTP when `GATEHOUSE_SMTP_URL` is set, else the drop directory.
    public static func transport(_ settings: MailSettings, home: String,
                                 environment: [String: String] = ProcessInfo.processInfo.environment) throws -> any MailTransport {
        guard let url = settings.smtpURL else { return DropDirectoryTransport(path: settings.dropDirectory) }
        return try SMTPTransport(url: url, caFiles: TrustedCAFiles.of(home: home, environment: environment))
    }

    /// `host:pid`: unique among the senders running at once on every node
    /// (MailOutboxStore.claimDue asks that of `claimer`).
    static func claimer() -> String {
        var name = [CChar](repeating: 0, count: 256)
        let host = gethostname(&name, name.count - 1) == 0 ? String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
        return (host.isEmpty ? "gatehouse" : host) + ":" + String(getpid())
    }

    static func log(_ message: String) {
        RequestLog.event(endpoint: name, message: message)
    }
}

/// SIGTERM and SIGINT set a flag the loop reads between messages; nothing
/// else happens in the handler (only async-signal-safe work belongs there).
enum StopSignals {
    nonisolated(unsafe) static var flag: sig_atomic_t = 0

    static var received: Bool { flag != 0 }

    static func install() {
        for signal in [SIGTERM, SIGINT] {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { _ in StopSignals.flag = 1 }
            sigemptyset(&action.sa_mask)
            action.sa_flags = SA_RESTART
            sigaction(signal, &action, nil)
        }
    }

    /// Sleeps up to `seconds`, in tenths, waking early for a stop.
    static func sleep(_ seconds: Double) {
        var left = seconds
        while left > 0 && !received {
            MailSender.pause(seconds: min(left, 0.1))
            left -= 0.1
        }
    }
}
