import IssuerStorage
import FoundationEssentials

/// `keys.files`: every file in the keys directory (signing keys, the
/// refresh and TOTP sealing keys) is the owner's alone, and no half-written
/// `.tmp` key was left behind by an interrupted rotation.
struct KeyFilesCheck: DoctorCheck {
    func findings(_ context: DoctorContext) -> [DoctorFinding] {
        let directory = context.config.keysDirectory
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return [] }
        var exposed: [String] = [], leftovers: [String] = [], count = 0
        for name in names.sorted() {
            guard let mode = FileStatus(path: directory + "/" + name), !mode.isDirectory else { continue }
            count += 1
            if mode.groupOrOther != 0 { exposed.append("\(name) (\(mode.octal))") }
            if name.hasSuffix(".tmp") { leftovers.append(name) }
        }
        if !exposed.isEmpty {
            return [DoctorFinding(.fail, "keys.files", "group or other can access \(exposed.joined(separator: ", ")) in \(directory); chmod 600 them")]
        }
        if !leftovers.isEmpty {
            return [DoctorFinding(.warn, "keys.files", "left over from an interrupted write: \(leftovers.joined(separator: ", ")) in \(directory)")]
        }
        return [DoctorFinding(.ok, "keys.files", "\(count) files in \(directory), none readable by group or other")]
    }
}
