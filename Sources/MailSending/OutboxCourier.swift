import AuthServer
import FoundationEssentials
import IssuerStorage
import SMTPClient
import SSOCore

/// Who delivers an outbox row that is not mail, and counts and audits
/// what came of it: the sender claims, retries and records every kind
/// alike (one queue, one lease, one backoff), and hands each row to the
/// courier of its kind, or to the mail transport.
public protocol OutboxCourier {
    /// One attempt; never throws (every outcome is a `MailDelivery`).
    func deliver(_ message: OutboxMessage) -> MailDelivery
    /// The attempt's outcome, once recorded: metric, audit, log line.
    func report(_ outcome: MailOutcome, of message: OutboxMessage) -> String
}

/// Back-channel logout notices: BackchannelLogoutDelivery signs and POSTs,
/// this maps its answer onto the sender's (a 4xx is a permanent failure,
/// like an SMTP 5xx) and reports it under the back-channel metric.
public final class BackchannelLogoutCourier: OutboxCourier {
    let delivery: BackchannelLogoutDelivery
    /// The receiver of the row last delivered, for its report.
    private var receivers: [Int64: String] = [:]

    public init(_ delivery: BackchannelLogoutDelivery) { self.delivery = delivery }

    public func deliver(_ message: OutboxMessage) -> MailDelivery {
        let (result, receiver) = delivery.deliver(clientID: message.recipient, notice: message.message)
        receivers[message.id] = receiver
        switch result {
        case .delivered: return .delivered
        case .retry(let detail): return .temporaryFailure(detail: detail)
        case .failed(let detail): return .permanentFailure(detail: detail)
        }
    }

    public func report(_ outcome: MailOutcome, of message: OutboxMessage) -> String {
        let receiver = receivers.removeValue(forKey: message.id)
        let sid = (try? JSONDecoder().decode(BackchannelLogoutNotice.self, from: Data(message.message)))?.sid
        BackchannelLogoutEvents.attempted(result: outcome.metricResult)
        let what = "back-channel logout \(message.id) for \(message.recipient) (\(receiver ?? "no receiver"))"
        switch outcome {
        case .sent:
            BackchannelLogoutEvents.delivered(clientID: message.recipient, sid: sid, receiver: receiver)
            return what + " delivered"
        case .retry(let next, let error):
            return what + " not delivered, retry at \(next): \(error)"
        case .failed(let error):
            BackchannelLogoutEvents.failed(clientID: message.recipient, sid: sid, receiver: receiver, reason: error)
            return what + " failed: \(error)"
        }
    }
}
