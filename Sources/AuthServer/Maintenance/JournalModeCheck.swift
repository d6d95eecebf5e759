/// `database.journal`: WAL, so readers never wait for a writer (DESIGN
/// "Storage"). Every read-write open switches to it, so anything else
/// means no responder or ssoctl has opened this file yet.
struct JournalModeCheck: DoctorCheck {
    func findings(_ context: DoctorContext) -> [DoctorFinding] {
        guard let database = context.database else { return [] }
        do {
            let mode = try database.queryOne("PRAGMA journal_mode")?.string(0).lowercased() ?? "?"
            if mode == "wal" { return [DoctorFinding(.ok, "database.journal", "WAL")] }
            return [DoctorFinding(.warn, "database.journal", "journal_mode is \(mode), not WAL: readers and writers block each other")]
        } catch {
            return [DoctorFinding(.fail, "database.journal", "PRAGMA journal_mode: \(error)")]
        }
    }
}
