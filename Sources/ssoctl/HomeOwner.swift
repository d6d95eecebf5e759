import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// ssoctl started as root on a home that belongs to another user (Scripts/run
/// hands it to `gatehouse`; production's /var/lib/gatehouse is gatehouse's)
/// becomes that user before it opens anything. Run as root it would leave
/// root-owned files there, a 0600 signing key from `keys rotate` or a new
/// database, that the responders running as the home's owner cannot read.
enum HomeOwner {
    /// The home as GatehouseConfig.load finds it, without opening a file.
    static func homePath(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        environment["GATEHOUSE_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? "var"
    }

    /// Becomes the owner of the home when running as root and the home
    /// exists and is not root's; otherwise changes nothing. Exits 1 rather
    /// than go on as root when the switch fails.
    static func becomeOwnerIfRoot() {
        guard geteuid() == 0 else { return }
        var info = stat()
        guard stat(homePath(), &info) == 0, info.st_uid != 0 else { return }
        let uid = info.st_uid
        // The owner's primary group and supplementary groups, as a login
        // would give them; a uid without a passwd entry gets the home's group.
        var gid = info.st_gid
        var name: String?
        if let entry = getpwuid(uid) {
            gid = entry.pointee.pw_gid
            name = String(cString: entry.pointee.pw_name)
        }
        // Groups first: once the uid is not 0 there is no right left to change them.
        let groupsSet = name.map { initgroups($0, gid) == 0 } ?? (setgroups(1, [gid]) == 0)
        guard groupsSet, setgid(gid) == 0, setuid(uid) == 0, getuid() == uid, geteuid() == uid, setuid(0) != 0 else {
            fail("started as root, but cannot become uid \(uid), the owner of \(homePath()): \(String(cString: strerror(errno)))")
        }
    }
}
