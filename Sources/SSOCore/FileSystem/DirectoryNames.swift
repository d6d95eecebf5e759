import Glibc

/// The names in a folder (without "." and ".."), as bytes decoded to
/// String, in no particular order; empty when it cannot be read. For the
/// ops responder's scans of metrics/ and the socket folder, which must not
/// need Foundation's FileManager.
public enum DirectoryNames {
    public static func of(_ directory: String) -> [String] {
        guard let folder = opendir(directory) else { return [] }
        defer { closedir(folder) }
        var names: [String] = []
        while let entry = readdir(folder) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }
}
