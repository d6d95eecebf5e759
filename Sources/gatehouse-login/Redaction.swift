import Foundation

/// How tokens and times are shown: a token by its first characters and its
/// length, so two can be told apart without either being usable.
enum Redaction {
    static func preview(_ token: String?) -> String {
        guard let token else { return "(none)" }
        return "\(token.prefix(8))… (\(token.utf8.count) chars)"
    }

    static func time(_ seconds: Int64, now: Date = Date()) -> String {
        let formatter = ISO8601DateFormatter()
        let when = formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
        let delta = seconds - Int64(now.timeIntervalSince1970)
        if delta == 0 { return when + " (now)" }
        return when + (delta > 0 ? " (in \(duration(delta)))" : " (\(duration(-delta)) ago)")
    }

    static func duration(_ seconds: Int64) -> String {
        if seconds < 60 { return "\(seconds)s" }
        if seconds < 3600 { return "\(seconds / 60)m \(seconds % 60)s" }
        if seconds < 86400 { return "\(seconds / 3600)h \(seconds % 3600 / 60)m" }
        return "\(seconds / 86400)d \(seconds % 86400 / 3600)h"
    }
}
