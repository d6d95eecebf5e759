import IssuerStorage
import SMTPClient

/// What the sender records after one attempt at one message: the decision
/// alone, made without storage or network, so the tests can hold every
/// case to it.
public enum MailOutcome: Equatable, Sendable {
    /// Delivered: `markSent`.
    case sent
    /// A temporary failure: `reschedule` to `nextAttemptAt`.
    case retry(nextAttemptAt: Int64, error: String)
    /// A permanent failure, or retries given up: `markFailed`, audited.
    case failed(error: String)

    /// The `result` label of `gatehouse_mail_sent_total`.
    public var metricResult: String {
        switch self {
        case .sent: "sent"
        case .retry: "retry"
        case .failed: "failed"
        }
    }

    /// `message` was tried at `now` and `delivery` is what came of it.
    /// RFC 5321 §4.2.1 and SMTPTransport.classify sort the replies; here
    /// a temporary failure becomes a retry until the schedule gives up.
    /// `message.attempts` counts the attempts that ended before this one.
    public static func of(_ delivery: MailDelivery, for message: OutboxMessage, now: Int64, schedule: RetrySchedule) -> MailOutcome {
        switch delivery {
        case .delivered:
            return .sent
        case .permanentFailure(let detail):
            return .failed(error: detail)
        case .temporaryFailure(let detail):
            let failures = message.attempts + 1
            guard let next = schedule.nextAttempt(afterFailure: failures, createdAt: message.createdAt, now: now) else {
                let hours = schedule.giveUpAfter / 3600
                return .failed(error: "given up after \(failures) attempts in \(hours) h; last: \(detail)")
            }
            return .retry(nextAttemptAt: next, error: detail)
        }
    }
}
