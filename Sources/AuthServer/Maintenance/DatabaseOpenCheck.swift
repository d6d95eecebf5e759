/// `database.open`: the SQLite file exists and reads as a database.
struct DatabaseOpenCheck: DoctorCheck {
    func findings(_ context: DoctorContext) -> [DoctorFinding] {
        guard context.database != nil else {
            return [DoctorFinding(.fail, "database.open", context.databaseError ?? "not opened")]
        }
        let path = context.config.databasePath
        var detail = "\(path), \(FileStatus(path: path)?.size ?? 0) bytes"
        if let wal = FileStatus(path: path + "-wal") { detail += " (+ \(wal.size) bytes WAL)" }
        return [DoctorFinding(.ok, "database.open", detail)]
    }
}
