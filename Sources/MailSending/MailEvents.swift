import SSOCore

/// The sender's events: each attempt counted in
/// `gatehouse_mail_sent_total{kind,result}`, and a message given up
/// written to the audit log as `mail_failed` (one call each, so the
/// counter and the audit lines never disagree).
///
/// `mail_failed`: `target` is the recipient's address, `reason` the
/// message's kind and the log-safe failure (the server as
/// `smtp://host:port`, the SMTP reply code, libcurl's text); `user`,
/// `client` and `ip` are null (no request caused the attempt). Never the
/// message, its link or the server's credentials.
public enum MailEvents {
    public static func attempted(kind: String, outcome: MailOutcome) {
        Metrics.count(.mailSent, MailMetricLabels.value(kind: kind, result: outcome.metricResult))
    }

    public static func failed(recipient: String, kind: String, reason: String) {
        AuditLog.record(AuditEvent(event: "mail_failed", reason: kind + ": " + reason, target: recipient))
    }
}
