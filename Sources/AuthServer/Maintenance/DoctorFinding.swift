/// One line of `ssoctl doctor`: a check's verdict and what it saw.
public struct DoctorFinding: Equatable, Sendable, Encodable {
    /// `warn` never fails the run; `fail` does.
    public enum Status: String, Sendable, Encodable { case ok, warn, fail }

    public let status: Status
    /// A stable dotted name (`keys.private-key`) scripts and tests can match.
    public let check: String
    public let detail: String

    public init(_ status: Status, _ check: String, _ detail: String) {
        self.status = status
        self.check = check
        self.detail = detail
    }

    /// `ok|warn|fail  <check>  <detail>`.
    public var line: String { "\(status.rawValue)  \(check)  \(detail)" }
}

extension DoctorFinding.Status: Comparable {
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rank < rhs.rank }
    private var rank: Int { switch self { case .ok: 0; case .warn: 1; case .fail: 2 } }
}
