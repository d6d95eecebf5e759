import Foundation
import Glibc
import XCTest
@testable import SSOCore

/// The per-process counter files (CounterFile), what the ops listener reads
/// from them (MetricsExposition.collect), the Prometheus text it renders and
/// how a responder picks its file (Metrics.start).
///
/// `Metrics.counters` is one process-wide global shared by every test target
/// linked into the test binary: each test here that replaces it puts the
/// previous one back in tearDown.
final class MetricsTests: XCTestCase {
    var directory = ""
    private var savedCounters: CounterFile!
    private var savedCountsRequests = true

    override func setUpWithError() throws {
        // Short, so socket-like path limits never matter and failures are readable.
        directory = "/tmp/gh-metrics-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        savedCounters = Metrics.counters
        savedCountsRequests = Metrics.countsRequests
    }

    override func tearDown() {
        Metrics.counters = savedCounters
        Metrics.countsRequests = savedCountsRequests
        try? FileManager.default.removeItem(atPath: directory)
    }

    // MARK: Helpers

    func path(_ name: String) -> String { directory + "/" + name }

    /// Replaces the process's counters with a file of `endpoint` (restored in tearDown).
    @discardableResult
    func useCounterFile(_ name: String, endpoint: String) throws -> CounterFile {
        let file = try CounterFile(path: path(name), endpoint: endpoint)
        Metrics.counters = file
        return file
    }

    func slot(_ family: CounterFamily, _ value: String = "") -> Int { MetricCatalogue.slot(family, value) }

    func bytes(of name: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: URL(fileURLWithPath: path(name)))) }

    func write(_ bytes: [UInt8], to name: String) {
        XCTAssertTrue(FileManager.default.createFile(atPath: path(name), contents: Data(bytes)), "could not write \(name)")
    }

    /// The value of the one sample line `series` (name and labels exactly as rendered).
    func sample(_ text: String, _ series: String, file: StaticString = #filePath, line: UInt = #line) -> String? {
        let values = text.split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix(series + " ") else { return nil }
            return String(line.dropFirst(series.count + 1))
        }
        XCTAssertLessThanOrEqual(values.count, 1, "series \(series) rendered more than once", file: file, line: line)
        return values.first
    }

    func le(_ bound: Double) -> String { "\(bound)" }

    // MARK: (a) A counter file, read back; a restart continues it

    func testCountsWrittenByOneFileAreReadByCollect() throws {
        let counters = try CounterFile(path: path("token-1.metrics"), endpoint: "token")
        for _ in 0..<3 { counters.add(1, at: slot(.logins, "success")) }
        counters.add(7, at: slot(.accountLocks))
        counters.add(1, at: MetricCatalogue.statusSlot(200))

        let sums = MetricsExposition.collect(directory: directory)
        XCTAssertEqual(Array(sums.keys), ["token"])
        let slots = try XCTUnwrap(sums["token"])
        XCTAssertEqual(slots.count, MetricCatalogue.slotCount)
        XCTAssertEqual(slots[slot(.logins, "success")], 3)
        XCTAssertEqual(slots[slot(.accountLocks)], 7)
        XCTAssertEqual(slots[MetricCatalogue.statusSlot(200)], 1)
        XCTAssertEqual(slots.reduce(0, +), 11, "nothing else counted")

        // The file is exactly the documented layout: header, then the slots.
        let attributes = try FileManager.default.attributesOfItem(atPath: path("token-1.metrics"))
        XCTAssertEqual((attributes[.size] as? NSNumber)?.intValue, CounterFile.headerSize + MetricCatalogue.slotCount * 8)
        XCTAssertEqual((attributes[.posixPermissions] as? NSNumber)?.intValue, 0o600, "created 0600")
        let raw = try bytes(of: "token-1.metrics")
        XCTAssertEqual(raw.prefix(8), [0x47, 0x48, 0x4d, 0x45, 0x54, 0x52, 0x43, 0x31], "magic GHMETRC1")
        XCTAssertEqual(Array(raw[32..<37]), Array("token".utf8))
        XCTAssertEqual(raw.withUnsafeBytes { $0.load(fromByteOffset: 24, as: UInt64.self) }, UInt64(getpid()), "the writer's pid")
    }

    func testReopeningForTheSameEndpointContinuesTheCounts() throws {
        var counters: CounterFile? = try CounterFile(path: path("token-1.metrics"), endpoint: "token")
        for _ in 0..<5 { counters!.add(1, at: slot(.tokensIssued, "refresh_token")) }
        counters!.add(1, at: MetricCatalogue.statusSlot(500))
        counters = nil  // the process exits (munmap); the file stays

        XCTAssertEqual(MetricsExposition.collect(directory: directory)["token"]?[slot(.tokensIssued, "refresh_token")], 5,
                       "a dead process's counts still count")

        let restarted = try CounterFile(path: path("token-1.metrics"), endpoint: "token")
        XCTAssertEqual(restarted.value(at: slot(.tokensIssued, "refresh_token")), 5, "continued, not zeroed")
        XCTAssertEqual(restarted.value(at: MetricCatalogue.statusSlot(500)), 1)
        restarted.add(1, at: slot(.tokensIssued, "refresh_token"))
        XCTAssertEqual(MetricsExposition.collect(directory: directory)["token"]?[slot(.tokensIssued, "refresh_token")], 6,
                       "monotonic across the restart")
    }

    func testReopeningForAnotherEndpointStartsFromZero() throws {
        var counters: CounterFile? = try CounterFile(path: path("slot-1.metrics"), endpoint: "token")
        counters!.add(9, at: slot(.logins, "wrong_password"))
        counters = nil

        let reassigned = try CounterFile(path: path("slot-1.metrics"), endpoint: "authorize")
        XCTAssertEqual(reassigned.value(at: slot(.logins, "wrong_password")), 0, "another endpoint's counts are not inherited")
        let sums = MetricsExposition.collect(directory: directory)
        XCTAssertEqual(Array(sums.keys), ["authorize"], "the token counts are gone, not attributed to authorize")
        XCTAssertEqual(sums["authorize"]?.reduce(0, +), 0)
    }

    func testAFileOfAnotherLayoutOrSizeIsStartedAfresh() throws {
        let counters = try CounterFile(path: path("token-1.metrics"), endpoint: "token")
        counters.add(4, at: slot(.logouts))
        var raw = try bytes(of: "token-1.metrics")
        raw[8] ^= 0xFF  // another build's fingerprint
        write(raw, to: "other-build.metrics")
        write(Array(raw.prefix(40)), to: "short.metrics")

        let fromOtherBuild = try CounterFile(path: path("other-build.metrics"), endpoint: "token")
        XCTAssertEqual(fromOtherBuild.value(at: slot(.logouts)), 0, "another layout is neither read nor continued")
        let fromShort = try CounterFile(path: path("short.metrics"), endpoint: "token")
        XCTAssertEqual(fromShort.value(at: slot(.logouts)), 0)
        fromShort.add(1, at: slot(.logouts))
        XCTAssertEqual(MetricsExposition.collect(directory: directory)["token"]?[slot(.logouts)], 4 + 0 + 1)
    }

    func testOpeningRefusesASymlinkAndADirectory() throws {
        let target = path("elsewhere")
        XCTAssertTrue(FileManager.default.createFile(atPath: target, contents: Data("precious".utf8)))
        try FileManager.default.createSymbolicLink(atPath: path("token-1.metrics"), withDestinationPath: target)
        XCTAssertThrowsError(try CounterFile(path: path("token-1.metrics"), endpoint: "token"))
        XCTAssertEqual(try String(contentsOfFile: target, encoding: .utf8), "precious", "nothing written through the link")

        try FileManager.default.createDirectory(atPath: path("token-2.metrics"), withIntermediateDirectories: false)
        XCTAssertThrowsError(try CounterFile(path: path("token-2.metrics"), endpoint: "token"))
    }

    // MARK: (b) Collect: sums per endpoint, ignores everything else

    func testFilesOfOneEndpointAreSummedAndEndpointsKeptApart() throws {
        let token1 = try CounterFile(path: path("token-1.metrics"), endpoint: "token")
        let token2 = try CounterFile(path: path("token-2.metrics"), endpoint: "token")
        let authorize = try CounterFile(path: path("authorize-1.metrics"), endpoint: "authorize")
        token1.add(2, at: MetricCatalogue.statusSlot(200))
        token2.add(3, at: MetricCatalogue.statusSlot(200))
        token2.add(1, at: MetricCatalogue.statusSlot(400))
        authorize.add(10, at: MetricCatalogue.statusSlot(200))

        let sums = MetricsExposition.collect(directory: directory)
        XCTAssertEqual(Set(sums.keys), ["token", "authorize"])
        XCTAssertEqual(sums["token"]?[MetricCatalogue.statusSlot(200)], 5)
        XCTAssertEqual(sums["token"]?[MetricCatalogue.statusSlot(400)], 1)
        XCTAssertEqual(sums["authorize"]?[MetricCatalogue.statusSlot(200)], 10)
        XCTAssertEqual(sums["authorize"]?[MetricCatalogue.statusSlot(400)], 0)

        let text = MetricsExposition.render(sums)
        XCTAssertEqual(sample(text, #"gatehouse_http_requests_total{endpoint="token",code="200"}"#), "5")
        XCTAssertEqual(sample(text, #"gatehouse_http_requests_total{endpoint="authorize",code="200"}"#), "10")
        XCTAssertNil(sample(text, #"gatehouse_http_requests_total{endpoint="authorize",code="400"}"#), "zero statuses are not rendered")
    }

    func testCollectIgnoresEveryFileThatIsNotAValidCounterFile() throws {
        let valid = try CounterFile(path: path("token-1.metrics"), endpoint: "token")
        valid.add(1, at: MetricCatalogue.statusSlot(200))
        valid.add(1, at: slot(.logins, "success"))
        let good = try bytes(of: "token-1.metrics")
        let size = good.count

        func variant(_ name: String, _ change: (inout [UInt8]) -> Void) {
            var copy = good
            change(&copy)
            write(copy, to: name)
        }
        variant("wrong-magic.metrics") { $0[0] ^= 0x01 }
        variant("zero-magic.metrics") { for index in 0..<8 { $0[index] = 0 } }
        variant("wrong-fingerprint.metrics") { $0[12] ^= 0x40 }
        variant("wrong-slot-count.metrics") { $0[16] &+= 1 }
        variant("too-long.metrics") { $0 += [UInt8](repeating: 0, count: 8) }
        variant("truncated.metrics") { $0.removeLast(size - 100) }
        variant("header-only.metrics") { $0.removeLast(size - CounterFile.headerSize) }
        variant("one-byte-short.metrics") { $0.removeLast() }
        write([], to: "empty.metrics")
        // A perfectly valid file under a name collect does not read.
        write(good, to: "token-9.txt")
        write(good, to: "token-9.metrics.bak")
        write(good, to: "token-9.Metrics")
        // A symlink, to a valid file outside the folder and to one inside it.
        let outside = directory + "-outside"
        XCTAssertTrue(FileManager.default.createFile(atPath: outside, contents: Data(good)))
        defer { try? FileManager.default.removeItem(atPath: outside) }
        try FileManager.default.createSymbolicLink(atPath: path("link-out.metrics"), withDestinationPath: outside)
        try FileManager.default.createSymbolicLink(atPath: path("link-in.metrics"), withDestinationPath: path("token-1.metrics"))
        try FileManager.default.createSymbolicLink(atPath: path("dangling.metrics"), withDestinationPath: path("nowhere"))
        // A folder with the suffix.
        try FileManager.default.createDirectory(atPath: path("folder.metrics"), withIntermediateDirectories: false)

        let sums = MetricsExposition.collect(directory: directory)
        XCTAssertEqual(Array(sums.keys), ["token"])
        XCTAssertEqual(sums["token"]?[MetricCatalogue.statusSlot(200)], 1, "only token-1.metrics counted")
        XCTAssertEqual(sums["token"]?[slot(.logins, "success")], 1)
        XCTAssertEqual(sums["token"]?.reduce(0, +), 2)
    }

    /// A FIFO named `*.metrics` (anyone who can write the folder can make
    /// one) must not hang the scrape: `read` opens with O_NONBLOCK and skips
    /// what is not a regular file. Found by this test: the first version
    /// blocked in open(2). If it regresses, the test releases the stuck open
    /// itself after two seconds so the suite never hangs, then fails.
    func testCollectDoesNotBlockOnAFIFO() throws {
        let valid = try CounterFile(path: path("token-1.metrics"), endpoint: "token")
        valid.add(1, at: MetricCatalogue.statusSlot(200))
        XCTAssertEqual(mkfifo(path("fifo.metrics"), 0o600), 0)

        let finished = DispatchSemaphore(value: 0)
        let directory = self.directory
        nonisolated(unsafe) var sums: [String: [UInt64]] = [:]
        Thread.detachNewThread {
            sums = MetricsExposition.collect(directory: directory)
            finished.signal()
        }
        if finished.wait(timeout: .now() + 2) == .timedOut {
            XCTFail("MetricsExposition.collect blocks in open(2) on a FIFO named *.metrics (needs O_NONBLOCK)")
            // A writer's open releases the blocked reader; collect then skips the FIFO.
            let writer = open(path("fifo.metrics"), O_WRONLY | O_NONBLOCK)
            finished.wait()
            if writer >= 0 { close(writer) }
        }
        XCTAssertEqual(sums["token"]?[MetricCatalogue.statusSlot(200)], 1, "the valid file is still counted")
    }

    func testCollectOfAMissingOrEmptyFolderIsEmpty() throws {
        XCTAssertTrue(MetricsExposition.collect(directory: directory).isEmpty)
        XCTAssertTrue(MetricsExposition.collect(directory: path("missing")).isEmpty)
        XCTAssertTrue(FileManager.default.createFile(atPath: path("plain"), contents: Data()))
        XCTAssertTrue(MetricsExposition.collect(directory: path("plain")).isEmpty, "a regular file is not a folder")
        // Rendering nothing still gives every family's HELP and TYPE.
        let text = MetricsExposition.render([:])
        for family in CounterFamily.allCases { XCTAssertTrue(text.contains("# TYPE \(family.name) counter\n"), family.name) }
        try assertPrometheusTextFormat(text)
    }

    // MARK: (c) Closed label values

    func testAnUnlistedLabelValueCountsUnderOtherNeverAsANewSeries() throws {
        try useCounterFile("token-1.metrics", endpoint: "token")
        Metrics.count(.logins, "made_up_result")
        Metrics.count(.logins, "alice@example.com")
        Metrics.count(.logins, "")
        Metrics.count(.dpopProofsRejected, "evil\"} 1\ninjected_metric")
        Metrics.count(.tokensIssued, "urn:ietf:params:oauth:grant-type:jwt-bearer")
        Metrics.count(.tokensIssued, "authorization_code")
        Metrics.count(.accessTokenRefusals, "Token_Expired")
        Metrics.count(.jwksFetches, "ok")
        Metrics.count(.accountLocks, "ignored by an unlabelled family")
        Metrics.request(status: 418, nanoseconds: 1000)

        XCTAssertEqual(Metrics.value(.logins, "made_up_result"), 3, "every unlisted value reads the one other slot")
        XCTAssertEqual(Metrics.value(.logins, MetricCatalogue.otherLabelValue), 3)
        XCTAssertEqual(Metrics.value(.logins, "success"), 0)
        XCTAssertEqual(Metrics.value(.accountLocks), 1)
        XCTAssertEqual(Metrics.requests(status: 418), 1)

        let text = MetricsExposition.render(MetricsExposition.collect(directory: directory))
        XCTAssertEqual(sample(text, #"gatehouse_logins_total{result="other"}"#), "3")
        XCTAssertEqual(sample(text, #"gatehouse_dpop_proofs_rejected_total{reason="other"}"#), "1")
        XCTAssertEqual(sample(text, #"gatehouse_tokens_issued_total{grant="other"}"#), "1")
        XCTAssertEqual(sample(text, #"gatehouse_tokens_issued_total{grant="authorization_code"}"#), "1")
        XCTAssertEqual(sample(text, #"gatehouse_access_token_refusals_total{endpoint="token",reason="other"}"#), "1")
        XCTAssertEqual(sample(text, #"gatehouse_jwks_fetches_total{endpoint="token",result="ok"}"#), "1")
        XCTAssertEqual(sample(text, "gatehouse_account_locks_total"), "1")
        XCTAssertEqual(sample(text, #"gatehouse_http_requests_total{endpoint="token",code="other"}"#), "1")
        for typed in ["made_up_result", "alice", "evil", "injected_metric", "jwt-bearer", "Token_Expired", "ignored", "418"] {
            XCTAssertFalse(text.contains(typed), "\(typed) became part of the exposition")
        }

        // Every label value rendered is one the catalogue lists (or "other").
        let statusValues = Set(MetricCatalogue.statusCodes.map(String.init) + [MetricCatalogue.otherLabelValue])
        let bucketValues = Set(MetricCatalogue.durationBuckets.map { "\($0)" } + ["+Inf"])
        for sample in try assertPrometheusTextFormat(text) {
            for (label, value) in sample.labels {
                switch label {
                case "endpoint": XCTAssertEqual(value, "token")
                case "code": XCTAssertTrue(statusValues.contains(value), "code \(value)")
                case "le": XCTAssertTrue(bucketValues.contains(value), "le \(value)")
                default:
                    let family = try XCTUnwrap(CounterFamily.allCases.first { $0.name == sample.name }, "label \(label) on \(sample.name)")
                    let position = try XCTUnwrap(family.labelNames.firstIndex(of: label), "\(sample.name) has no label \(label)")
                    let listed = (family.values + [MetricCatalogue.otherLabelValue])
                        .map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
                        .compactMap { $0.indices.contains(position) ? $0[position] : nil }
                    XCTAssertTrue(listed.contains(value), "\(sample.name) \(label)=\(value)")
                }
            }
        }
    }

    func testTheSeriesCountIsBoundedByTheCatalogue() throws {
        // However many distinct values are counted, the exposition does not grow.
        try useCounterFile("token-1.metrics", endpoint: "token")
        Metrics.count(.logins, "first")
        let before = MetricsExposition.render(MetricsExposition.collect(directory: directory)).split(separator: "\n").count
        for index in 0..<500 {
            Metrics.count(.logins, "value-\(index)")
            Metrics.count(.dpopProofsRejected, "reason-\(index)")
            Metrics.count(.tokensIssued, "grant-\(index)")
        }
        let after = MetricsExposition.render(MetricsExposition.collect(directory: directory)).split(separator: "\n").count
        XCTAssertEqual(after, before, "issuer families render every listed value and other, whatever was counted")
    }

    func testEveryLabelledFamilyHasAnOtherSlotAndNoValueIsListedTwice() {
        for family in CounterFamily.allCases {
            XCTAssertEqual(Set(family.values).count, family.values.count, family.name)
            XCTAssertFalse(family.values.contains(MetricCatalogue.otherLabelValue), family.name)
            XCTAssertEqual(family.label == nil, family.values.isEmpty, family.name)
        }
        // Slots never overlap: each (family, value) has its own.
        var seen = Set<Int>()
        for family in CounterFamily.allCases {
            for value in (family.label == nil ? [""] : family.values + ["other"]) {
                XCTAssertTrue(seen.insert(MetricCatalogue.slot(family, value)).inserted, "\(family.name) \(value)")
            }
        }
        XCTAssertEqual(seen.max(), MetricCatalogue.slotCount - 1)
        XCTAssertEqual(LoginResult.allCases.map(\.rawValue), CounterFamily.logins.values)
    }

    // MARK: (d) The request histogram

    func testHistogramBucketsAreCumulativeAndCountMatchesTheStatuses() throws {
        try useCounterFile("token-1.metrics", endpoint: "token")
        Metrics.request(status: 200, nanoseconds: 3_000_000)         // 3 ms
        Metrics.request(status: 404, nanoseconds: 500_000)           // 0.5 ms
        Metrics.request(status: 200, nanoseconds: 5_000_000)         // exactly 5 ms: le is inclusive
        Metrics.request(status: 200, nanoseconds: 30_000_000_000)    // 30 s: +Inf only
        Metrics.request(status: 302, nanoseconds: 1_000_000_000)     // 1 s
        let text = MetricsExposition.render(MetricsExposition.collect(directory: directory))

        func bucket(_ bound: String) -> Int? {
            sample(text, "gatehouse_http_request_duration_seconds_bucket{endpoint=\"token\",le=\"\(bound)\"}").flatMap { Int($0) }
        }
        XCTAssertEqual(bucket(le(0.001)), 1)
        XCTAssertEqual(bucket(le(0.0025)), 1, "3 ms is not under 2.5 ms")
        XCTAssertEqual(bucket(le(0.005)), 3, "3 ms and 5 ms are under 5 ms")
        XCTAssertEqual(bucket(le(0.01)), 3)
        XCTAssertEqual(bucket(le(0.5)), 3)
        XCTAssertEqual(bucket(le(1)), 4)
        XCTAssertEqual(bucket(le(10)), 4)
        XCTAssertEqual(bucket("+Inf"), 5)

        // Cumulative: never decreasing, in the catalogue's order, +Inf last.
        let buckets = text.split(separator: "\n").filter { $0.hasPrefix("gatehouse_http_request_duration_seconds_bucket{endpoint=\"token\"") }
        XCTAssertEqual(buckets.count, MetricCatalogue.durationBuckets.count + 1)
        XCTAssertTrue(buckets.last?.contains("le=\"+Inf\"") ?? false)
        let counts = buckets.compactMap { $0.split(separator: " ").last.flatMap { Int($0) } }
        XCTAssertEqual(counts, counts.sorted(), "cumulative")

        let count = try XCTUnwrap(sample(text, #"gatehouse_http_request_duration_seconds_count{endpoint="token"}"#).flatMap { Int($0) })
        let statuses = text.split(separator: "\n").filter { $0.hasPrefix("gatehouse_http_requests_total{endpoint=\"token\"") }
            .compactMap { $0.split(separator: " ").last.flatMap { Int($0) } }
        XCTAssertEqual(count, statuses.reduce(0, +), "_count is the sum of the status counts")
        XCTAssertEqual(count, 5)
        XCTAssertEqual(count, bucket("+Inf"))

        let sum = try XCTUnwrap(sample(text, #"gatehouse_http_request_duration_seconds_sum{endpoint="token"}"#).flatMap { Double($0) })
        XCTAssertEqual(sum, 0.003 + 0.0005 + 0.005 + 30 + 1, accuracy: 1e-9, "seconds, not nanoseconds")
    }

    func testOffSwitchCountsNoRequestsButStillCountsEvents() throws {
        try useCounterFile("token-1.metrics", endpoint: "token")
        Metrics.start(endpoint: "token", home: directory, environment: ["GATEHOUSE_METRICS": "off"])
        XCTAssertFalse(Metrics.countsRequests)
        Metrics.request(status: 200, nanoseconds: 1000)
        XCTAssertEqual(Metrics.requests(status: 200), 0)
        Metrics.count(.logouts)
        XCTAssertEqual(Metrics.value(.logouts), 1, "security events are still counted")
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory + "/metrics"), "no folder made when off")
    }

    // MARK: (e) The text format

    /// One sample line, parsed.
    struct Sample {
        let name: String
        let labels: [(String, String)]
        let value: String
    }

    static let sampleLine = try! NSRegularExpression(
        pattern: #"^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[a-zA-Z_][a-zA-Z0-9_]*="(\\.|[^"\\])*"(,[a-zA-Z_][a-zA-Z0-9_]*="(\\.|[^"\\])*")*\})? [0-9.eE+-]+$"#)

    /// Checks `text` against the Prometheus text format (0.0.4): every sample
    /// line well formed, every family announced by HELP then TYPE before its
    /// samples, its samples together, no series twice; returns the samples.
    @discardableResult
    func assertPrometheusTextFormat(_ text: String, file: StaticString = #filePath, line: UInt = #line) throws -> [Sample] {
        XCTAssertTrue(text.hasSuffix("\n"), "the last line ends with a line feed", file: file, line: line)
        var helped = Set<String>(), types: [String: String] = [:], current: String?, seen = Set<String>(), samples: [Sample] = []
        for raw in text.split(separator: "\n", omittingEmptySubsequences: false).dropLast() {
            let row = String(raw)
            if row.hasPrefix("# HELP ") {
                let name = String(row.dropFirst(7).prefix { $0 != " " })
                XCTAssertFalse(helped.contains(name), "HELP twice for \(name)", file: file, line: line)
                helped.insert(name)
                continue
            }
            if row.hasPrefix("# TYPE ") {
                let parts = row.dropFirst(7).split(separator: " ")
                XCTAssertEqual(parts.count, 2, row, file: file, line: line)
                let name = String(parts[0])
                XCTAssertTrue(helped.contains(name), "TYPE before HELP for \(name)", file: file, line: line)
                XCTAssertNil(types[name], "TYPE twice for \(name)", file: file, line: line)
                XCTAssertTrue(["counter", "gauge", "histogram"].contains(String(parts[1])), row, file: file, line: line)
                types[name] = String(parts[1])
                current = name
                continue
            }
            XCTAssertFalse(row.hasPrefix("#"), "unexpected comment: \(row)", file: file, line: line)
            let range = NSRange(row.startIndex..., in: row)
            XCTAssertNotNil(Self.sampleLine.firstMatch(in: row, range: range), "not a sample line: \(row.debugDescription)", file: file, line: line)
            let parsed = try parseSample(row)
            XCTAssertNotNil(Double(parsed.value), "value of \(row)", file: file, line: line)
            var family = parsed.name
            if types[family] == nil, let suffix = ["_bucket", "_sum", "_count"].first(where: { family.hasSuffix($0) }) {
                family = String(family.dropLast(suffix.count))
                XCTAssertEqual(types[family], "histogram", "\(parsed.name) without a histogram", file: file, line: line)
            }
            XCTAssertNotNil(types[family], "sample of \(family) before its TYPE", file: file, line: line)
            XCTAssertEqual(current, family, "samples of \(family) not grouped under its TYPE", file: file, line: line)
            let key = parsed.name + "{" + parsed.labels.map { "\($0.0)=\($0.1)" }.joined(separator: ",") + "}"
            XCTAssertTrue(seen.insert(key).inserted, "series twice: \(key)", file: file, line: line)
            samples.append(parsed)
        }
        return samples
    }

    /// Name, unescaped labels and value of a line that matched `sampleLine`.
    func parseSample(_ line: String) throws -> Sample {
        var characters = Substring(line)
        let name = String(characters.prefix { $0 != "{" && $0 != " " })
        characters = characters.dropFirst(name.count)
        var labels: [(String, String)] = []
        if characters.first == "{" {
            characters = characters.dropFirst()
            while characters.first != "}" {
                if characters.first == "," { characters = characters.dropFirst() }
                let label = String(characters.prefix { $0 != "=" })
                characters = characters.dropFirst(label.count + 2)  // `="`
                var value = ""
                while let character = characters.first, character != "\"" {
                    characters = characters.dropFirst()
                    if character == "\\" {
                        let escaped = try XCTUnwrap(characters.first)
                        characters = characters.dropFirst()
                        switch escaped {
                        case "n": value.append("\n")
                        case "\\": value.append("\\")
                        case "\"": value.append("\"")
                        default: XCTFail("unknown escape \\\(escaped) in \(line)")
                        }
                    } else {
                        value.append(character)
                    }
                }
                characters = characters.dropFirst()  // closing quote
                labels.append((label, value))
            }
            characters = characters.dropFirst()  // }
        }
        return Sample(name: name, labels: labels, value: String(characters.dropFirst()))
    }

    func testTheExpositionIsValidTextFormat() throws {
        let token = try useCounterFile("token-1.metrics", endpoint: "token")
        Metrics.request(status: 200, nanoseconds: 12_345)
        Metrics.request(status: 599, nanoseconds: 99_000_000_000)
        for family in CounterFamily.allCases {
            for value in family.label == nil ? [""] : family.values + ["other"] { Metrics.count(family, value) }
        }
        let resource = try CounterFile(path: path("api-a-1.metrics"), endpoint: "api-a")
        resource.add(3, at: slot(.accessTokenRefusals, "token_expired"))
        resource.add(1, at: slot(.jwksFetches, "failed"))
        resource.add(UInt64.max / 2, at: MetricCatalogue.statusSlot(200))
        resource.add(1, at: MetricCatalogue.durationSumSlot)
        _ = token

        let gauges = [MetricGauge(name: "gatehouse_ready", help: "Ready.", value: 1),
                      MetricGauge(name: "gatehouse_signing_key_age_seconds", help: "Age.", value: 86_400),
                      MetricGauge(name: "gatehouse_small", help: "Small.", value: 0.000_01)]
        let text = MetricsExposition.render(MetricsExposition.collect(directory: directory), gauges: gauges)
        let samples = try assertPrometheusTextFormat(text)
        XCTAssertFalse(samples.isEmpty)
        // Per-endpoint families only for the endpoints that count them.
        XCTAssertEqual(sample(text, #"gatehouse_access_token_refusals_total{endpoint="api-a",reason="token_expired"}"#), "3")
        XCTAssertEqual(sample(text, #"gatehouse_jwks_fetches_total{endpoint="api-a",result="failed"}"#), "1")
        // Issuer families are summed over every process: no endpoint label.
        XCTAssertEqual(sample(text, "gatehouse_refresh_reuse_detected_total"), "1")
        XCTAssertNotNil(sample(text, "gatehouse_ready"))
        XCTAssertTrue(text.contains("# TYPE gatehouse_ready gauge\n"))
        XCTAssertTrue(text.contains("# TYPE gatehouse_http_request_duration_seconds histogram\n"))
        XCTAssertEqual(Double(sample(text, "gatehouse_signing_key_age_seconds") ?? ""), 86_400)
    }

    func testEndpointNamesAreEscapedInLabels() throws {
        let name = "we\"ird\\end\npoint"
        let counters = try CounterFile(path: path("weird-1.metrics"), endpoint: name)
        counters.add(1, at: MetricCatalogue.statusSlot(200))
        counters.add(1, at: MetricCatalogue.durationSlot(nanoseconds: 1))
        counters.add(2, at: slot(.accessTokenRefusals, "missing_token"))
        XCTAssertEqual(Array(MetricsExposition.collect(directory: directory).keys), [name], "the header keeps the name as given")

        let text = MetricsExposition.render(MetricsExposition.collect(directory: directory))
        let escaped = #"endpoint="we\"ird\\end\npoint""#
        XCTAssertEqual(sample(text, "gatehouse_http_requests_total{\(escaped),code=\"200\"}"), "1")
        XCTAssertEqual(sample(text, "gatehouse_access_token_refusals_total{\(escaped),reason=\"missing_token\"}"), "2")
        XCTAssertNotNil(sample(text, "gatehouse_http_request_duration_seconds_count{\(escaped)}"))
        XCTAssertFalse(text.contains("end\npoint"), "no raw newline inside a label")
        let samples = try assertPrometheusTextFormat(text)
        let endpoints = Set(samples.flatMap { $0.labels.filter { $0.0 == "endpoint" }.map(\.1) })
        XCTAssertEqual(endpoints, [name], "unescaping gives the name back")
        XCTAssertEqual(MetricsExposition.escaped(#"a\"b"#), #"a\\\"b"#)
        XCTAssertEqual(MetricsExposition.escaped("plain-name_1"), "plain-name_1")
    }

    func testALongEndpointNameIsCutToTheHeaderAndStillContinued() throws {
        let long = String(repeating: "e", count: 100)
        var counters: CounterFile? = try CounterFile(path: path("long-1.metrics"), endpoint: long)
        counters!.add(1, at: slot(.logouts))
        counters = nil
        let again = try CounterFile(path: path("long-1.metrics"), endpoint: long)
        XCTAssertEqual(again.value(at: slot(.logouts)), 1, "the same (cut) name continues")
        XCTAssertEqual(Array(MetricsExposition.collect(directory: directory).keys), [String(repeating: "e", count: CounterFile.endpointCapacity - 1)])
    }

    // MARK: The audit log sink (AuditLog.start), beside the counters

    /// Runs `body` with AuditLog's globals restored afterwards (and any
    /// descriptor `start` opened closed).
    func withAuditLog(_ body: () throws -> Void) rethrows {
        let savedDescriptor = AuditLog.descriptor, savedRecorded = AuditLog.recorded
        defer {
            if AuditLog.descriptor > 2 && AuditLog.descriptor != savedDescriptor { close(AuditLog.descriptor) }
            AuditLog.descriptor = savedDescriptor
            AuditLog.recorded = savedRecorded
        }
        try body()
    }

    func testAuditEventsAreAppendedAsOneJSONLineEach() throws {
        try withAuditLog {
            let file = path("audit.log")
            XCTAssertNil(AuditLog.start(home: directory, environment: ["GATEHOUSE_AUDIT_LOG": file]))
            AuditLog.recorded = []
            AuditLog.record(AuditEvent(event: "login_failure", user: "a@example.com", client: "c", ip: "", reason: "wrong_password"))
            AuditLog.record(AuditEvent(event: "logout", user: "line\nbreak@example.com", sid: "s"))
            XCTAssertEqual(AuditLog.recorded?.map(\.event), ["login_failure", "logout"])
            let text = try String(contentsOfFile: file, encoding: .utf8)
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
            XCTAssertEqual(lines.count, 3, "two lines and the final newline: \(text.debugDescription)")
            let first = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any])
            XCTAssertEqual(first["event"] as? String, "login_failure")
            XCTAssertTrue(first["ip"] is NSNull, "an empty address is null")
            XCTAssertEqual(Set(first.keys), ["time", "event", "user", "client", "ip", "reason", "sid", "actor", "target"],
                           "every line has every member, null where it does not apply")
            let second = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(lines[1].utf8)) as? [String: Any])
            XCTAssertEqual(second["user"] as? String, "line\nbreak@example.com", "a newline in a value stays escaped on its line")
            let mode = try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? NSNumber
            XCTAssertEqual(mode?.intValue, 0o600)
        }
    }

    func testAnAppendDescriptorHandedOverIsUsed() throws {
        try withAuditLog {
            let file = path("handed.log")
            let fd = open(file, O_WRONLY | O_CREAT | O_APPEND, 0o600)
            XCTAssertGreaterThan(fd, 2)
            XCTAssertNil(AuditLog.start(home: directory, environment: ["GATEHOUSE_AUDIT_FD": "\(fd)", "GATEHOUSE_AUDIT_LOG": path("unused.log")]))
            XCTAssertEqual(AuditLog.descriptor, fd)
            AuditLog.record(AuditEvent(event: "logout", sid: "s"))
            XCTAssertTrue(try String(contentsOfFile: file, encoding: .utf8).contains("\"logout\""))
            XCTAssertFalse(FileManager.default.fileExists(atPath: path("unused.log")))
        }
    }

    func testADescriptorWithoutAppendIsNotUsed() {
        withAuditLog {
            let fd = open(path("plain.log"), O_WRONLY | O_CREAT, 0o600)
            defer { close(fd) }
            XCTAssertNil(AuditLog.start(home: directory, environment: ["GATEHOUSE_AUDIT_FD": "\(fd)", "GATEHOUSE_AUDIT_LOG": path("audit.log")]))
            XCTAssertNotEqual(AuditLog.descriptor, fd, "lines from several processes could interleave without O_APPEND")
            XCTAssertTrue(FileManager.default.fileExists(atPath: path("audit.log")))
        }
    }

    /// For a descriptor that is not open, `fcntl(fd, F_GETFL)` returns -1,
    /// whose O_APPEND bit is set: the first version adopted such a number,
    /// so events were lost, or written into whatever file later got that
    /// number. `start` must require F_GETFL to succeed, and otherwise open
    /// GATEHOUSE_AUDIT_LOG / log/audit.log as for a non-append descriptor.
    func testADescriptorThatIsNotOpenIsNotUsed() throws {
        try withAuditLog {
            var closed: Int32 = 900
            while fcntl(closed, F_GETFD) != -1 { closed += 1 }  // a number no file uses
            let problem = AuditLog.start(home: directory, environment: ["GATEHOUSE_AUDIT_FD": "\(closed)", "GATEHOUSE_AUDIT_LOG": path("audit.log")])
            // The file is opened instead (it may get that very number: open(2)
            // takes the lowest free one), and an event lands in it.
            XCTAssertNil(problem)
            AuditLog.record(AuditEvent(event: "logout", sid: "s"))
            let text = try String(contentsOfFile: path("audit.log"), encoding: .utf8)
            XCTAssertTrue(text.contains("\"event\":\"logout\""), "events would be lost: \(text.debugDescription)")
        }
    }

    func testAnUnopenableLogGoesToStandardErrorAndSaysWhy() throws {
        try withAuditLog {
            XCTAssertTrue(FileManager.default.createFile(atPath: path("target"), contents: Data()))
            try FileManager.default.createSymbolicLink(atPath: path("link.log"), withDestinationPath: path("target"))
            let problem = try XCTUnwrap(AuditLog.start(home: directory, environment: ["GATEHOUSE_AUDIT_LOG": path("link.log")]))
            XCTAssertTrue(problem.contains("standard error"), problem)
            XCTAssertEqual(AuditLog.descriptor, 2)
            XCTAssertEqual(AuditLog.path(home: "/srv/gh", environment: [:]), "/srv/gh/log/audit.log")
            XCTAssertEqual(AuditLog.path(home: "/srv/gh", environment: ["GATEHOUSE_AUDIT_LOG": ""]), "/srv/gh/log/audit.log")
        }
    }

    // MARK: (f) Metrics.start

    func testStartMapsTheSlotFileInTheMetricsFolder() throws {
        let folder = path("counters")
        Metrics.start(endpoint: "token", home: path("home-unused"),
                      environment: ["GATEHOUSE_METRICS_DIR": folder, "GATEHOUSE_SLOT": "token-3"])
        XCTAssertTrue(Metrics.counters.isMapped)
        XCTAssertTrue(Metrics.countsRequests)
        XCTAssertTrue(FileManager.default.fileExists(atPath: folder + "/token-3.metrics"))
        let mode = try FileManager.default.attributesOfItem(atPath: folder)[.posixPermissions] as? NSNumber
        XCTAssertEqual(mode?.intValue, 0o700, "the folder it made is the owner's alone")
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("home-unused")), "GATEHOUSE_METRICS_DIR wins over the home")

        Metrics.count(.logins, "success")
        Metrics.request(status: 200, nanoseconds: 3_000_000)
        let sums = MetricsExposition.collect(directory: folder)
        XCTAssertEqual(sums["token"]?[slot(.logins, "success")], 1)
        XCTAssertEqual(sums["token"]?[MetricCatalogue.statusSlot(200)], 1)

        // A restarted process of the same slot continues.
        Metrics.start(endpoint: "token", home: directory, environment: ["GATEHOUSE_METRICS_DIR": folder, "GATEHOUSE_SLOT": "token-3"])
        XCTAssertEqual(Metrics.value(.logins, "success"), 1)
    }

    func testStartWithoutAFolderSettingUsesMetricsInTheHome() throws {
        Metrics.start(endpoint: "authorize", home: directory, environment: ["GATEHOUSE_METRICS_DIR": "", "GATEHOUSE_SLOT": "authorize-1"])
        XCTAssertTrue(FileManager.default.fileExists(atPath: directory + "/metrics/authorize-1.metrics"))
        XCTAssertEqual(Metrics.directory(home: "/srv/gh", environment: [:]), "/srv/gh/metrics")
        XCTAssertEqual(Metrics.directory(home: "/srv/gh", environment: ["GATEHOUSE_METRICS_DIR": "/var/lib/x"]), "/var/lib/x")
    }

    func testAnUnusableFolderFallsBackToMemory() throws {
        XCTAssertTrue(FileManager.default.createFile(atPath: path("regular"), contents: Data("x".utf8)))
        for folder in [path("regular") + "/metrics", path("missing/parent/metrics"), path("regular")] {
            Metrics.counters = CounterFile(inMemoryFor: "reset")
            Metrics.start(endpoint: "token", home: directory, environment: ["GATEHOUSE_METRICS_DIR": folder, "GATEHOUSE_SLOT": "token-3"])
            XCTAssertFalse(Metrics.counters.isMapped, folder)
            Metrics.count(.logins, "success")
            XCTAssertEqual(Metrics.value(.logins, "success"), 1, "still counts, in memory (\(folder))")
            Metrics.request(status: 200, nanoseconds: 1)
            XCTAssertEqual(Metrics.requests(status: 200), 1)
        }
        XCTAssertEqual(try String(contentsOfFile: path("regular"), encoding: .utf8), "x")
    }

    func testASlotFileThatIsASymlinkIsNotFollowed() throws {
        let folder = path("counters")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        XCTAssertTrue(FileManager.default.createFile(atPath: path("victim"), contents: Data("keep".utf8)))
        try FileManager.default.createSymbolicLink(atPath: folder + "/token-3.metrics", withDestinationPath: path("victim"))
        Metrics.start(endpoint: "token", home: directory, environment: ["GATEHOUSE_METRICS_DIR": folder, "GATEHOUSE_SLOT": "token-3"])
        XCTAssertFalse(Metrics.counters.isMapped)
        XCTAssertEqual(try String(contentsOfFile: path("victim"), encoding: .utf8), "keep")
    }

    func testASlotNameWithPathCharactersIsNotUsedAsAFileName() throws {
        let folder = path("counters")
        let pidName = "token-pid\(getpid()).metrics"
        for slot in ["../token-3", "..", "a/b", "/tmp/evil", ".", "token-3/..", "Token-3", "token_3", "token 3", "token-3\n",
                     String(repeating: "a", count: 65), ""] {
            XCTAssertEqual(Metrics.fileName(endpoint: "token", environment: ["GATEHOUSE_SLOT": slot]), pidName, slot.debugDescription)
        }
        XCTAssertEqual(Metrics.fileName(endpoint: "token", environment: ["GATEHOUSE_SLOT": "token-3"]), "token-3.metrics")
        XCTAssertEqual(Metrics.fileName(endpoint: "token", environment: [:]), pidName)
        XCTAssertEqual(Metrics.fileName(endpoint: "../x", environment: [:]), "responder-pid\(getpid()).metrics")

        Metrics.start(endpoint: "token", home: directory, environment: ["GATEHOUSE_METRICS_DIR": folder, "GATEHOUSE_SLOT": "../escaped"])
        XCTAssertTrue(Metrics.counters.isMapped)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder), [pidName])
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("escaped.metrics")))
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory + "/escaped.metrics"))
    }
}
