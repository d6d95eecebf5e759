import Foundation
import XCTest
@testable import SSOCore

/// docs/DEPLOY.md's metrics table (section 14, "Metrics") names every label
/// value a counter can carry, as MetricCatalogue fixes them: an operator
/// writes alerts and dashboards from that table, so a value it leaves out
/// (a login result such as `passkey_refused`) is a series nobody watches.
final class MetricsDocumentationTests: XCTestCase {
    /// The table's rows by family: (labels column, meaning column).
    static let rows: [String: (labels: String, meaning: String)] = {
        let deploy = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/DEPLOY.md")
        let text = (try? String(contentsOf: deploy, encoding: .utf8)) ?? ""
        var rows: [String: (String, String)] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix("| `gatehouse_") {
            let columns = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard columns.count >= 5 else { continue }
            rows[columns[1].trimmingCharacters(in: CharacterSet(charactersIn: "`"))] = (columns[3], columns[4])
        }
        return rows
    }()

    func testEveryCounterFamilyHasARowNamingItsLabel() throws {
        XCTAssertFalse(Self.rows.isEmpty, "no metrics table in docs/DEPLOY.md")
        for family in CounterFamily.allCases {
            let row = try XCTUnwrap(Self.rows[family.name], "docs/DEPLOY.md's metrics table has no row for \(family.name)")
            for label in family.labelNames {
                XCTAssertTrue(row.labels.contains("`\(label)`"), "\(family.name): the labels column does not name `\(label)`")
            }
        }
    }

    func testEveryLabelValueACounterCanCarryIsListed() throws {
        for family in CounterFamily.allCases where family.label != nil {
            let row = try XCTUnwrap(Self.rows[family.name])
            // A family of two labels lists each label's values ("test", "sent"), not every pair.
            let parts = (family.values + [MetricCatalogue.otherLabelValue]).flatMap { $0.split(separator: ",").map(String.init) }
            for value in Set(parts).sorted() {
                XCTAssertTrue(row.meaning.contains("`\(value)`"), "docs/DEPLOY.md: \(family.name) does not list `\(value)`")
            }
        }
    }

    func testEveryCountedStatusCodeIsListed() throws {
        let row = try XCTUnwrap(Self.rows["gatehouse_http_requests_total"])
        for code in MetricCatalogue.statusCodes.map(String.init) + [MetricCatalogue.otherLabelValue] {
            XCTAssertTrue(row.meaning.contains("`\(code)`"), "docs/DEPLOY.md: gatehouse_http_requests_total does not list code `\(code)`")
        }
    }
}
