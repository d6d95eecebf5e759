import FoundationEssentials
import Glibc

/// A gauge the exposition's caller measures at scrape time (the signing
/// key's age, readiness): one unlabelled series.
public struct MetricGauge: Sendable {
    public let name: String
    public let help: String
    public let value: Double
    public init(name: String, help: String, value: Double) {
        self.name = name
        self.help = help
        self.value = value
    }
}

/// `/metrics`: every counter file in the metrics directory, summed per
/// endpoint, in the Prometheus text format (version 0.0.4). Files of a
/// slot whose process has exited still count (its counts happened), so
/// every sum only grows while the directory is kept.
public enum MetricsExposition {
    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    /// Counter files of processes that serve no HTTP (the mail sender's,
    /// `gatehouse-mailer`, counts under this endpoint name).
    public static let backgroundProcesses: Set<String> = ["mailer"]

    /// Summed slots by endpoint, from every valid counter file in `directory`.
    public static func collect(directory: String) -> [String: [UInt64]] {
        var sums: [String: [UInt64]] = [:]
        for name in DirectoryNames.of(directory) {
            guard name.hasSuffix(".metrics"), let (endpoint, slots) = read(directory + "/" + name) else { continue }
            var total = sums[endpoint] ?? [UInt64](repeating: 0, count: MetricCatalogue.slotCount)
            for index in total.indices { total[index] &+= slots[index] }
            sums[endpoint] = total
        }
        return sums
    }

    /// One counter file's endpoint and slots; nil for anything else.
    static func read(_ path: String) -> (String, [UInt64])? {
        // O_NONBLOCK: a FIFO given a counter file's name must not hang the scrape.
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG, Int(status.st_size) == CounterFile.fileSize,
              let mapped = mmap(nil, CounterFile.fileSize, PROT_READ, MAP_SHARED, fd, 0), mapped != MAP_FAILED else { return nil }
        defer { munmap(mapped, CounterFile.fileSize) }
        guard let header = CounterFile.header(mapped, size: CounterFile.fileSize) else { return nil }
        let slots = UnsafeBufferPointer(start: (mapped + CounterFile.headerSize).assumingMemoryBound(to: UInt64.self),
                                        count: MetricCatalogue.slotCount)
        return (header.endpoint, Array(slots))
    }

    /// The exposition text of `sums` (from `collect`) and `gauges`.
    public static func render(_ sums: [String: [UInt64]], gauges: [MetricGauge] = []) -> String {
        var text = ""
        let endpoints = sums.keys.sorted()
        // Processes that answer no requests (the mail sender) count only
        // their own families: no request or duration series for them.
        let httpEndpoints = endpoints.filter { !backgroundProcesses.contains($0) }
        let labels = MetricCatalogue.statusCodes.map(String.init) + [MetricCatalogue.otherLabelValue]

        family(&text, "gatehouse_http_requests_total", "counter", "Requests answered by the responders, by endpoint and status code.")
        for endpoint in httpEndpoints {
            let slots = sums[endpoint]!
            for (offset, code) in labels.enumerated() where slots[MetricCatalogue.statusBase + offset] > 0 {
                text += "gatehouse_http_requests_total{endpoint=\"\(escaped(endpoint))\",code=\"\(code)\"} \(slots[MetricCatalogue.statusBase + offset])\n"
            }
        }

        family(&text, "gatehouse_http_request_duration_seconds", "histogram",
               "Time from accepting a request to its last byte written, by endpoint.")
        for endpoint in httpEndpoints {
            let slots = sums[endpoint]!, name = escaped(endpoint)
            var cumulative: UInt64 = 0
            for (offset, bound) in MetricCatalogue.durationBuckets.enumerated() {
                cumulative += slots[MetricCatalogue.durationBase + offset]
                text += "gatehouse_http_request_duration_seconds_bucket{endpoint=\"\(name)\",le=\"\(bound)\"} \(cumulative)\n"
            }
            cumulative += slots[MetricCatalogue.durationBase + MetricCatalogue.durationBuckets.count]
            text += "gatehouse_http_request_duration_seconds_bucket{endpoint=\"\(name)\",le=\"+Inf\"} \(cumulative)\n"
            text += "gatehouse_http_request_duration_seconds_sum{endpoint=\"\(name)\"} \(Double(slots[MetricCatalogue.durationSumSlot]) / 1e9)\n"
            text += "gatehouse_http_request_duration_seconds_count{endpoint=\"\(name)\"} \(cumulative)\n"
        }

        for counter in CounterFamily.allCases {
            family(&text, counter.name, "counter", counter.help)
            let base = MetricCatalogue.familyBases[counter.rawValue]
            // A family of two labels lists "other" among its own values.
            let values = counter.label == nil ? [""]
                : counter.values + (counter.labelNames.count > 1 ? [] : [MetricCatalogue.otherLabelValue])
            if counter.perEndpoint {
                // Only the endpoints that count this family (the resource servers).
                for endpoint in endpoints where values.indices.contains(where: { sums[endpoint]![base + $0] > 0 }) {
                    for (offset, value) in values.enumerated() {
                        text += series(counter, endpoint: endpoint, value: value) + " \(sums[endpoint]![base + offset])\n"
                    }
                }
            } else {
                for (offset, value) in values.enumerated() {
                    let total = endpoints.reduce(UInt64(0)) { $0 &+ sums[$1]![base + offset] }
                    text += series(counter, endpoint: nil, value: value) + " \(total)\n"
                }
            }
        }

        for gauge in gauges {
            family(&text, gauge.name, "gauge", gauge.help)
            text += "\(gauge.name) \(gauge.value)\n"
        }
        return text
    }

    static func family(_ text: inout String, _ name: String, _ type: String, _ help: String) {
        text += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
    }

    static func series(_ family: CounterFamily, endpoint: String?, value: String) -> String {
        var labels: [String] = []
        if let endpoint { labels.append("endpoint=\"\(escaped(endpoint))\"") }
        for (label, part) in zip(family.labelNames, value.split(separator: ",", omittingEmptySubsequences: false)) {
            labels.append("\(label)=\"\(part)\"")
        }
        return family.name + (labels.isEmpty ? "" : "{" + labels.joined(separator: ",") + "}")
    }

    /// A label value as the text format wants it: backslash, quote and
    /// newline escaped (endpoint names come from counter files on disk).
    static func escaped(_ value: String) -> String {
        var result = ""
        for character in value.unicodeScalars {
            switch character {
            case "\\": result += "\\\\"
            case "\"": result += "\\\""
            case "\n": result += "\\n"
            default: result.unicodeScalars.append(character)
            }
        }
        return result
    }
}
