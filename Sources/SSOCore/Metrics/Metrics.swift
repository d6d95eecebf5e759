import FoundationEssentials
import Glibc

/// The process's counters: what a responder counts for the ops listener's
/// `/metrics`. Every responder starts them once (`start`), before its first
/// request, into a file of its own under the metrics directory; until then,
/// and in tests and ssoctl, they count in memory.
///
/// One responder process is single-threaded, so this global is written by
/// one thread only; tests that count read it back with `value`.
public enum Metrics {
    nonisolated(unsafe) static var counters = CounterFile(inMemoryFor: "process")
    /// False with `GATEHOUSE_METRICS=off`: requests are not counted at all
    /// (Scripts/bench measures what counting costs against it).
    nonisolated(unsafe) static var countsRequests = true

    /// The folder of the counter files: `GATEHOUSE_METRICS_DIR`, or
    /// `metrics/` in the home.
    public static func directory(home: String, environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        environment["GATEHOUSE_METRICS_DIR"].flatMap { $0.isEmpty ? nil : $0 } ?? home + "/metrics"
    }

    /// The file of this process's pool slot: `GATEHOUSE_SLOT` (ENDPOINT-N,
    /// set by Scripts/run's supervisor and by gatehouse-responder under
    /// systemd), else the endpoint and the pid. A name that is not plain
    /// letters, digits and dashes is not used as a file name.
    static func fileName(endpoint: String, environment: [String: String]) -> String {
        let plain = { (name: String) in
            !name.isEmpty && name.utf8.count <= 64 && name.utf8.allSatisfy { $0 == 0x2D || (0x30...0x39).contains($0) || (0x61...0x7A).contains($0) }
        }
        if let slot = environment["GATEHOUSE_SLOT"], plain(slot) { return slot + ".metrics" }
        return (plain(endpoint) ? endpoint : "responder") + "-pid\(getpid()).metrics"
    }

    /// Maps this process's counter file; on failure it logs why and keeps
    /// counting in memory (a process never fails to serve for its metrics).
    public static func start(endpoint: String, home: String, environment: [String: String] = ProcessInfo.processInfo.environment) {
        if environment["GATEHOUSE_METRICS"] == "off" {
            countsRequests = false
            return
        }
        let folder = directory(home: home, environment: environment)
        do {
            if mkdir(folder, 0o700) != 0 && errno != EEXIST { throw CounterFileError("cannot create \(folder): errno \(errno)") }
            counters = try CounterFile(path: folder + "/" + fileName(endpoint: endpoint, environment: environment), endpoint: endpoint)
        } catch {
            counters = CounterFile(inMemoryFor: endpoint)
            RequestLog.event(endpoint: endpoint, message: "metrics kept in memory only: \(error)")
        }
    }

    /// One answered request: its status and how long it took.
    @inline(__always)
    public static func request(status: Int, nanoseconds: UInt64) {
        guard countsRequests else { return }
        counters.add(1, at: MetricCatalogue.statusSlot(status))
        counters.add(1, at: MetricCatalogue.durationSlot(nanoseconds: nanoseconds))
        counters.add(nanoseconds, at: MetricCatalogue.durationSumSlot)
    }

    /// One event of `family`, under label value `value` (ignored by an
    /// unlabelled family; one the family does not list counts as "other").
    public static func count(_ family: CounterFamily, _ value: String = "") {
        counters.add(1, at: MetricCatalogue.slot(family, value))
    }

    /// This process's count of `family` / `value` (for tests).
    public static func value(_ family: CounterFamily, _ value: String = "") -> UInt64 {
        counters.value(at: MetricCatalogue.slot(family, value))
    }

    /// This process's count of requests answered with `status` (for tests).
    public static func requests(status: Int) -> UInt64 { counters.value(at: MetricCatalogue.statusSlot(status)) }
}

extension DPoPError.Reason {
    /// The `reason` label of `gatehouse_dpop_proofs_rejected_total`.
    public var metricLabel: String {
        switch self {
        case .missing: "missing"
        case .repeated: "repeated"
        case .malformed: "malformed"
        case .wrongType: "wrong_type"
        case .unsupportedAlgorithm: "unsupported_algorithm"
        case .badKey: "bad_key"
        case .privateKeyIncluded: "private_key_included"
        case .badSignature: "bad_signature"
        case .wrongMethod: "wrong_method"
        case .wrongURI: "wrong_uri"
        case .stale: "stale"
        case .missingAccessTokenHash: "missing_ath"
        case .wrongAccessTokenHash: "wrong_ath"
        case .replayed: "replayed"
        case .wrongKey: "wrong_key"
        }
    }
}
