import FoundationEssentials
import Glibc
import IssuerStorage
import SSOCore

/// Where the ops responder looks, and what it calls this node.
public struct OpsSettings: Sendable {
    /// The counter files of every responder process (Metrics.directory).
    public var metricsDirectory: String
    /// The responder pools' sockets (ENDPOINT-N.sock).
    public var socketDirectory: String
    /// This node's row in `readiness_probes`.
    public var node: String

    public init(metricsDirectory: String, socketDirectory: String, node: String) {
        self.metricsDirectory = metricsDirectory
        self.socketDirectory = socketDirectory
        self.node = node
    }

    /// The settings of a node whose home is `home`: GATEHOUSE_SOCKET_DIR
    /// (systemd's /run/gatehouse) or `run/` in the home; the host name.
    public static func of(home: String, environment: [String: String] = ProcessInfo.processInfo.environment) -> OpsSettings {
        var name = [CChar](repeating: 0, count: 256)
        let host = gethostname(&name, name.count - 1) == 0 ? String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
        return OpsSettings(metricsDirectory: Metrics.directory(home: home, environment: environment),
                           socketDirectory: environment["GATEHOUSE_SOCKET_DIR"].flatMap { $0.isEmpty ? nil : $0 } ?? home + "/run",
                           node: host.isEmpty ? "gatehouse" : host)
    }
}

/// The ops listener (loopback only, nginx's `127.0.0.1:<base+4>`):
/// `GET /metrics` (Prometheus text format), `GET /health/live` and
/// `GET /health/ready` (JSON, 503 with a reason when not).
public final class OpsResponder: RoutedEndpointGroup {
    public let table: RouteTable

    public init(services: IssuerServices, settings: OpsSettings) {
        let ops = OpsAnswers(storage: services.storage, activeSigningKey: services.activeSigningKey, signingKeys: services.signingKeys,
                             clock: services.clock, settings: settings)
        table = RouteTable([Endpoint("/metrics", .read, cache: .noStore, handler: { _ in ops.metrics() }),
                            Endpoint("/health/live", .read, cache: .noStore, handler: { _ in try ops.live() }),
                            Endpoint("/health/ready", .read, cache: .noStore, handler: { _ in try ops.ready() })])
    }
}

/// What the ops endpoints read and how they say it.
struct OpsAnswers {
    /// For the readiness probe's write (StorageMaintenance).
    let storage: any IssuerStorage
    let activeSigningKey: ActiveSigningKeyCache
    let signingKeys: SigningKeys
    let clock: Clock
    let settings: OpsSettings

    struct Health: Encodable {
        let status: String
        var reason: String?
        var checks: [String: String]
    }

    func metrics() -> Response {
        let readiness = readinessChecks()
        var gauges = [MetricGauge(name: "gatehouse_ready", help: "1 when a database write succeeds and a signing key is loaded, else 0.",
                                  value: readiness.failure == nil ? 1 : 0)]
        if let age = signingKeyAge() {
            gauges.append(MetricGauge(name: "gatehouse_signing_key_age_seconds", help: "Age of the active signing key.", value: Double(age)))
        }
        gauges += mailOutboxGauges()
        let text = MetricsExposition.render(MetricsExposition.collect(directory: settings.metricsDirectory), gauges: gauges)
        return Response(status: 200, headers: [("Content-Type", MetricsExposition.contentType)], body: Array(text.utf8))
    }

    /// 200 while every responder pool has a slot that takes connections.
    func live() throws -> Response {
        let pools = ResponderSockets.probe(directory: settings.socketDirectory)
        var checks: [String: String] = [:]
        for (endpoint, slots) in pools {
            let answering = slots.filter { $0 == .answering }.count
            checks[endpoint] = answering > 0 ? "ok" : "no slot answers (\(slots.count) slots)"
        }
        let down = checks.filter { $0.value != "ok" }.keys.sorted()
        let reason = pools.isEmpty ? "no responder sockets in \(settings.socketDirectory)"
            : down.isEmpty ? nil : "not answering: " + down.joined(separator: ", ")
        return try health(Health(status: reason == nil ? "live" : "down", reason: reason, checks: checks))
    }

    /// 200 only when a database write succeeds and a signing key is loaded.
    func ready() throws -> Response {
        let readiness = readinessChecks()
        return try health(Health(status: readiness.failure == nil ? "ready" : "not_ready", reason: readiness.failure,
                                 checks: readiness.checks))
    }

    func readinessChecks() -> (checks: [String: String], failure: String?) {
        var checks: [String: String] = [:], failures: [String] = []
        do {
            try storage.maintenance.recordReadinessProbe(node: settings.node, now: clock())
            checks["database_write"] = "ok"
        } catch {
            checks["database_write"] = "failed"
            failures.append("database write failed: \(error)")
        }
        do {
            let key = try activeSigningKey.signingKey()
            checks["signing_key"] = "ok (\(key.kid))"
        } catch {
            checks["signing_key"] = "failed"
            failures.append("no signing key loaded: \(error)")
        }
        return (checks, failures.isEmpty ? nil : failures.joined(separator: "; "))
    }

    /// The mail outbox's backlog (one count over its partial index of open
    /// messages): what is due now, and how long the most overdue message
    /// has waited. Growing while no sender runs or the SMTP server refuses;
    /// both absent when the database cannot be read.
    func mailOutboxGauges() -> [MetricGauge] {
        guard let backlog = try? storage.read.mailOutbox.backlog(now: clock()) else { return [] }
        return [MetricGauge(name: "gatehouse_mail_outbox_due", help: "Queued messages due for delivery now (claimed ones included).",
                            value: Double(backlog.due)),
                MetricGauge(name: "gatehouse_mail_outbox_oldest_due_seconds",
                            help: "How long the most overdue queued message has been due; 0 when none is.",
                            value: Double(backlog.oldestDueAge ?? 0))]
    }

    func signingKeyAge() -> Int64? {
        guard let active = try? signingKeys.all().first(where: { $0.state == .active }) else { return nil }
        return max(0, clock() - active.createdAt)
    }

    func health(_ health: Health) throws -> Response {
        try .json(health, status: health.reason == nil ? 200 : 503)
    }
}
