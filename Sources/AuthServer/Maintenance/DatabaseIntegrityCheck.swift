/// `database.integrity`: SQLite's own consistency check of every page,
/// record and index (PRAGMA integrity_check; quick_check with --quick).
struct DatabaseIntegrityCheck: DoctorCheck {
    func findings(_ context: DoctorContext) -> [DoctorFinding] {
        guard let database = context.database else { return [] }
        let pragma = context.settings.quickIntegrityCheck ? "quick_check" : "integrity_check"
        do {
            let messages = try database.query("PRAGMA \(pragma)").map { $0.string(0) }
            if messages == ["ok"] { return [DoctorFinding(.ok, "database.integrity", "PRAGMA \(pragma): ok")] }
            let shown = messages.prefix(3).joined(separator: "; ")
            return [DoctorFinding(.fail, "database.integrity", "PRAGMA \(pragma): \(shown)"
                                  + (messages.count > 3 ? " (\(messages.count) problems)" : ""))]
        } catch {
            return [DoctorFinding(.fail, "database.integrity", "PRAGMA \(pragma): \(error)")]
        }
    }
}
