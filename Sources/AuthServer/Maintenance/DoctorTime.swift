import IssuerStorage
import FoundationEssentials

/// Times in doctor's details: RFC 3339, UTC.
enum DoctorTime {
    static func format(_ seconds: Int64) -> String {
        Date(timeIntervalSince1970: Double(seconds)).formatted(.iso8601)
    }
}
