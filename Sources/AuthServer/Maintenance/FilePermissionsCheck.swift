import IssuerStorage
import FoundationEssentials
import Glibc

/// `files.*`: who besides the owner may reach the home, the database and
/// the keys directory. One rule per place; `failing` bits fail, `warning`
/// bits warn, a missing required path fails.
struct FilePermissionsCheck: DoctorCheck {
    let check: String
    /// The paths under the home, and whether each must exist.
    let paths: (DoctorContext) -> [(path: String, required: Bool)]
    let failing: mode_t
    let warning: mode_t
    let expectation: String

    /// Scripts/run makes the home 0711: nginx's workers (another user) must
    /// traverse it to reach run/'s sockets, but nobody else lists or writes it.
    static let home = FilePermissionsCheck(check: "files.home", paths: { [($0.home, true)] }, failing: 0o022, warning: 0o044,
                                           expectation: "0711 or stricter")

    /// Password and token hashes: never world-readable. SQLite gives -wal
    /// and -shm the database file's mode, so they are checked alike. With
    /// PostgreSQL there is no such file (the master key is keys.files').
    static let database = FilePermissionsCheck(check: "files.database", paths: { context in
        guard context.config.databaseURL == nil else { return [] }
        let path = context.config.databasePath
        return [(path, true), (path + "-wal", false), (path + "-shm", false)]
    }, failing: 0o006, warning: 0o070, expectation: "0600")

    /// docs/ARCHITECTURE.md "Storage": private keys in keys/, the directory 0700. Writable
    /// by others means keys could be replaced; merely listable warns.
    static let keysDirectory = FilePermissionsCheck(check: "files.keys-dir", paths: { [($0.config.keysDirectory, true)] },
                                                    failing: 0o022, warning: 0o055, expectation: "0700")

    /// Scripts/run's log/ (production logs to the journal and nginx's own
    /// files, so there is none there): 0700, its files are LogFilesCheck's.
    static let logDirectory = FilePermissionsCheck(check: "files.log-dir", paths: { [($0.logDirectory, false)] },
                                                   failing: 0o027, warning: 0o050, expectation: "0700")

    func findings(_ context: DoctorContext) -> [DoctorFinding] {
        guard !paths(context).isEmpty else { return [] }
        var seen: [String] = [], failures: [String] = [], warnings: [String] = []
        for (path, required) in paths(context) {
            guard let mode = FileStatus(path: path) else {
                if required { failures.append("\(path) is missing") }
                continue
            }
            seen.append("\(path) \(mode.octal)")
            if mode.bits & failing != 0 {
                failures.append("\(path) is mode \(mode.octal) (\(Self.who(mode.bits & failing, directory: mode.isDirectory)))")
            } else if mode.bits & warning != 0 {
                warnings.append("\(path) is mode \(mode.octal) (\(Self.who(mode.bits & warning, directory: mode.isDirectory)))")
            }
        }
        if !failures.isEmpty { return [DoctorFinding(.fail, check, failures.joined(separator: "; ") + " (expected \(expectation))")] }
        if !warnings.isEmpty { return [DoctorFinding(.warn, check, warnings.joined(separator: "; ") + " (expected \(expectation))")] }
        if seen.isEmpty { return [DoctorFinding(.ok, check, "nothing to check: \(paths(context).map(\.path).joined(separator: ", ")) absent")] }
        return [DoctorFinding(.ok, check, seen.joined(separator: ", "))]
    }

    /// "group-writable, other-readable" for the offending bits.
    static func who(_ bits: mode_t, directory: Bool = false) -> String {
        var parts: [String] = []
        for (shift, class_) in [(3, "group"), (0, "other")] {
            let triple = (bits >> mode_t(shift)) & 0o7
            let rights = [(0o4, "readable"), (0o2, "writable"), (0o1, directory ? "searchable" : "executable")].filter { triple & mode_t($0.0) != 0 }.map(\.1)
            if !rights.isEmpty { parts.append("\(class_)-\(rights.joined(separator: "/"))") }
        }
        return parts.joined(separator: ", ")
    }
}
