import IssuerStorage
import FoundationEssentials

/// `files.logs`: every file in Scripts/run's log/ is its owner's alone.
/// nginx's error log holds request lines (a query string may carry an ID
/// token), the responders' logs client addresses and account names: no
/// other local user may read them. Absent in production (the journal).
struct LogFilesCheck: DoctorCheck {
    func findings(_ context: DoctorContext) -> [DoctorFinding] {
        let directory = context.logDirectory
        guard let folder = FileStatus(path: directory), folder.isDirectory else {
            return [DoctorFinding(.ok, "files.logs", "nothing to check: \(directory) absent")]
        }
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
        } catch {
            return [DoctorFinding(.warn, "files.logs", "cannot list \(directory) (run doctor as its owner): \(error)")]
        }
        var exposed: [String] = [], count = 0
        for name in names {
            guard let mode = FileStatus(path: directory + "/" + name), !mode.isDirectory else { continue }
            count += 1
            if mode.groupOrOther != 0 {
                exposed.append("\(name) (\(mode.octal): \(FilePermissionsCheck.who(mode.groupOrOther)))")
            }
        }
        if !exposed.isEmpty {
            return [DoctorFinding(.fail, "files.logs", "group or other can access \(exposed.joined(separator: ", ")) in \(directory); "
                                      + "chmod 600 them (expected 0600)")]
        }
        return [DoctorFinding(.ok, "files.logs", "\(count) files in \(directory), none readable by group or other")]
    }
}
