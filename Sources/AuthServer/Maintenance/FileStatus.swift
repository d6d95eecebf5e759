import IssuerStorage
import Glibc

/// What `stat` says about a path (links followed): permission bits, kind, size.
struct FileStatus: Equatable {
    let bits: mode_t
    let isDirectory: Bool
    let size: Int64

    init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        bits = info.st_mode & 0o7777
        isDirectory = info.st_mode & S_IFMT == S_IFDIR
        size = Int64(info.st_size)
    }

    /// Any of the group and other bits: who besides the owner gets in.
    var groupOrOther: mode_t { bits & 0o077 }

    /// `0600`.
    var octal: String { "0" + String(bits, radix: 8) }
}
