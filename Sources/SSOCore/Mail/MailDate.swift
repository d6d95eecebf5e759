import Glibc

/// Times as mail writes them, in UTC, independent of the process's locale
/// and time zone.
enum MailDate {
    private static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// RFC 5322 §3.3 date-time: `Sat, 28 Nov 2026 10:07:00 +0000`.
    static func rfc5322(_ seconds: Int64) -> String {
        let time = utc(seconds)
        return "\(days[Int(time.tm_wday)]), \(time.tm_mday) \(months[Int(time.tm_mon)]) \(Int(time.tm_year) + 1900) "
            + "\(two(time.tm_hour)):\(two(time.tm_min)):\(two(time.tm_sec)) +0000"
    }

    /// `20261128T100700Z`: sorts as it reads, safe in a file name.
    static func compact(_ seconds: Int64) -> String {
        let time = utc(seconds)
        let year = String(Int(time.tm_year) + 1900)
        return String(repeating: "0", count: max(0, 4 - year.count)) + year + two(time.tm_mon + 1) + two(time.tm_mday)
            + "T" + two(time.tm_hour) + two(time.tm_min) + two(time.tm_sec) + "Z"
    }

    private static func utc(_ seconds: Int64) -> tm {
        var clock = time_t(seconds)
        var time = tm()
        _ = gmtime_r(&clock, &time)
        return time
    }

    private static func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
}
