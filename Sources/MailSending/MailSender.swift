import Glibc
import IssuerStorage
import SMTPClient
import SSOCore

/// The outbox's sender: claims due messages in one short write unit,
/// delivers each outside any transaction, records each outcome in another
/// short unit. At least once: a sender that dies holding a claim loses it
/// when the lease passes, and another sender (or this one, restarted)
/// sends the message again; on PostgreSQL the claim skips rows another
/// node holds (MailOutboxStore.claimDue), so two nodes never send one
/// message at the same time.
///
/// Single-threaded, like the responders: `run` loops until told to stop.
public final class MailSender {
    public struct Settings: Sendable {
        /// Messages claimed at once: a few, so a stop never strands many.
        public var batchSize = 5
        /// The claim's lease, in seconds: longer than the slowest batch
        /// (5 sends of at most 30 s each, SMTPTransport's bound) with room
        /// to spare, so no lease passes while its message is still sending.
        public var lease: Int64 = 300
        /// How often an idle sender looks for due messages, in seconds.
        public var idlePoll: Double = 1
        public var schedule = RetrySchedule()
        public init() {}
    }

    let storage: any IssuerStorage
    let transport: any MailTransport
    /// Who delivers the rows that are not mail, by kind.
    let couriers: [OutboxMessageKind: any OutboxCourier]
    let claimer: String
    let clock: Clock
    let settings: Settings
    /// Where the sender says what it did (its log, standard error).
    let log: (String) -> Void

    public init(storage: any IssuerStorage, transport: any MailTransport, couriers: [OutboxMessageKind: any OutboxCourier] = [:],
                claimer: String, settings: Settings = Settings(), clock: @escaping Clock = systemClock, log: @escaping (String) -> Void = { _ in }) {
        self.storage = storage
        self.transport = transport
        self.couriers = couriers
        self.claimer = claimer
        self.settings = settings
        self.clock = clock
        self.log = log
    }

    /// Until `shouldStop` says so: look for due messages (a count, cheap on
    /// both backends' partial index), claim and send a batch, or sleep.
    /// A stop is honoured between messages, never in the middle of one.
    public func run(shouldStop: () -> Bool, sleep: (Double) -> Void) {
        var databaseTrouble = false
        while !shouldStop() {
            do {
                let handled = try sendDueBatch(shouldStop: shouldStop)
                if databaseTrouble { log("database reachable again") }
                databaseTrouble = false
                if handled == 0 { sleep(settings.idlePoll) }
            } catch {
                if !databaseTrouble { log("cannot reach the outbox: \(error); trying again every second") }
                databaseTrouble = true
                sleep(settings.idlePoll)
            }
        }
    }

    /// One round: claims up to `batchSize` due messages and sends them.
    /// Returns how many were claimed (0: nothing due, or all of it held by
    /// other senders).
    @discardableResult
    public func sendDueBatch(shouldStop: () -> Bool = { false }) throws -> Int {
        let now = clock()
        guard try storage.read.mailOutbox.backlog(now: now).due > 0 else { return 0 }
        let batch = try storage.write {
            try $0.mailOutbox.claimDue(limit: settings.batchSize, now: now, lease: settings.lease, claimer: claimer)
        }
        for (index, message) in batch.enumerated() {
            if shouldStop() {
                release(Array(batch[index...]))
                break
            }
            send(message)
        }
        return batch.count
    }

    /// One attempt at `message` and its outcome recorded.
    func send(_ message: OutboxMessage) {
        if let courier = couriers[message.kind] {
            record(MailOutcome.of(courier.deliver(message), for: message, now: clock(), schedule: settings.schedule), of: message)
            return
        }
        let outcome: MailOutcome
        do {
            let mail = try QueuedMail(bytes: message.message, recipient: message.recipient)
            outcome = MailOutcome.of(transport.send(mail, queuedAt: message.createdAt), for: message, now: clock(),
                                     schedule: settings.schedule)
        } catch {
            // Bytes no sender could ever send (no From, no Message-ID, a
            // recipient that is no address): trying again cannot help.
            outcome = .failed(error: "unsendable: \(error)")
        }
        record(outcome, of: message)
    }

    /// The outcome in a write unit of its own, retried for a while if the
    /// database is out of reach: a message sent and not recorded is sent
    /// again once its lease passes (at least once, not exactly once).
    func record(_ outcome: MailOutcome, of message: OutboxMessage) {
        let now = clock()
        var recorded: Bool?
        for attempt in 0..<30 {
            do {
                recorded = try storage.write { tx in
                    switch outcome {
                    case .sent: try tx.mailOutbox.markSent(id: message.id, claimer: claimer, now: now)
                    case .retry(let next, let error):
                        try tx.mailOutbox.reschedule(id: message.id, claimer: claimer, nextAttemptAt: next, error: error, now: now)
                    case .failed(let error): try tx.mailOutbox.markFailed(id: message.id, claimer: claimer, error: error, now: now)
                    }
                }
                break
            } catch {
                if attempt == 0 { log("message \(message.id): cannot record \(outcome.metricResult): \(error); retrying") }
                Self.pause(seconds: 1)
            }
        }
        if let courier = couriers[message.kind] {
            log(courier.report(outcome, of: message))
        } else {
            report(outcome, of: message, now: now)
        }
        if recorded == false { log("message \(message.id): the claim had passed to another sender; its outcome was not recorded") }
        if recorded == nil { log("message \(message.id): outcome not recorded (database unreachable); it will be sent again") }
    }

    /// A mail attempt's metric, audit event and log line.
    func report(_ outcome: MailOutcome, of message: OutboxMessage, now: Int64) {
        MailEvents.attempted(kind: message.kind.rawValue, outcome: outcome)
        switch outcome {
        case .sent:
            log("message \(message.id) (\(message.kind.rawValue)) sent: \(transport.destination)")
        case .retry(let next, let error):
            log("message \(message.id) (\(message.kind.rawValue)) not sent, retry in \(next - now) s: \(error)")
        case .failed(let error):
            log("message \(message.id) (\(message.kind.rawValue)) failed: \(error)")
            MailEvents.failed(recipient: message.recipient, kind: message.kind.rawValue, reason: error)
        }
    }

    /// Claimed but not tried (the sender is stopping): due again at once,
    /// for any sender, instead of after the lease.
    func release(_ messages: [OutboxMessage]) {
        let now = clock()
        for message in messages {
            _ = try? storage.write {
                try $0.mailOutbox.reschedule(id: message.id, claimer: claimer, nextAttemptAt: now, error: "not tried: the sender stopped",
                                             now: now)
            }
        }
    }

    static func pause(seconds: Double) {
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - Double(Int(seconds))) * 1e9))
        _ = nanosleep(&request, nil)
    }
}
